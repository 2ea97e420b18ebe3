// Package simpleoutbox is a small outbox written the way many teams write
// one, and not the reference: a bigserial outbox table, a relay that locks
// a batch with FOR UPDATE SKIP LOCKED and keeps the lock while it
// publishes (no lease, no claim_id: a crash rolls the batch back), retries
// with a delay, and a consumer that dedupes by event_id in the same
// transaction as its effect. Its test runs it through outboxcheck's loop
// contract (loopcheck_test.go); it knows nothing of outboxcheck.
package simpleoutbox

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Schema creates the tables; safe to run twice.
const Schema = `
CREATE TABLE IF NOT EXISTS simple_orders (
    id         text PRIMARY KEY,
    amount     bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS simple_outbox (
    id           bigserial PRIMARY KEY,
    event_id     uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
    aggregate_id text NOT NULL,
    payload      jsonb NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    sent_at      timestamptz,
    attempts     integer NOT NULL DEFAULT 0,
    next_try_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS simple_outbox_unsent ON simple_outbox (id) WHERE sent_at IS NULL;
CREATE TABLE IF NOT EXISTS simple_processed (
    event_id uuid PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS simple_effects (
    event_id uuid NOT NULL,
    order_id text NOT NULL UNIQUE,
    amount   bigint NOT NULL
);`

// Event is what goes on the wire.
type Event struct {
	ID          string // event_id
	AggregateID string // the order
	Payload     []byte
}

// Order is the business fact.
type Order struct {
	ID     string `json:"order_id"`
	Amount int64  `json:"amount"`
}

// PlaceOrder writes the order and its event in the caller's transaction.
func PlaceOrder(ctx context.Context, tx pgx.Tx, o Order) error {
	if _, err := tx.Exec(ctx, `INSERT INTO simple_orders (id, amount) VALUES ($1, $2)`, o.ID, o.Amount); err != nil {
		return err
	}
	payload, err := json.Marshal(o)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO simple_outbox (aggregate_id, payload) VALUES ($1, $2)`, o.ID, payload)
	return err
}

// Relay sends unsent events, oldest first.
type Relay struct {
	Conn    *pgx.Conn
	Publish func(ctx context.Context, e Event) error
	Every   time.Duration // poll interval; default 50 ms
	Retry   time.Duration // delay before a failed event is tried again; default 100 ms
	Timeout time.Duration // bound on one batch; default 2 s
}

// Run polls until ctx is done or the connection fails.
func (r *Relay) Run(ctx context.Context) error {
	every := r.Every
	if every == 0 {
		every = 50 * time.Millisecond
	}
	timeout := r.Timeout
	if timeout == 0 {
		timeout = 2 * time.Second
	}
	for {
		bctx, cancel := context.WithTimeout(ctx, timeout)
		err := r.sendBatch(bctx)
		cancel()
		if err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(every):
		}
	}
}

// sendBatch locks up to ten due events, publishes them, and records the
// outcome, all in one transaction: another relay skips the locked rows, and
// if this one dies the rows unlock and will be sent again (at least once).
func (r *Relay) sendBatch(ctx context.Context) error {
	retry := r.Retry
	if retry == 0 {
		retry = 100 * time.Millisecond
	}
	tx, err := r.Conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	rows, err := tx.Query(ctx, `SELECT id, event_id::text, aggregate_id, payload FROM simple_outbox
		WHERE sent_at IS NULL AND next_try_at <= now() ORDER BY id LIMIT 10 FOR UPDATE SKIP LOCKED`)
	if err != nil {
		return err
	}
	type due struct {
		id int64
		ev Event
	}
	batch, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (due, error) {
		var d due
		return d, row.Scan(&d.id, &d.ev.ID, &d.ev.AggregateID, &d.ev.Payload)
	})
	if err != nil {
		return err
	}
	for _, d := range batch {
		if perr := r.Publish(ctx, d.ev); perr != nil {
			_, err = tx.Exec(ctx, `UPDATE simple_outbox SET attempts = attempts + 1, next_try_at = now() + $2::interval WHERE id = $1`,
				d.id, fmt.Sprintf("%d milliseconds", retry.Milliseconds()))
		} else {
			_, err = tx.Exec(ctx, `UPDATE simple_outbox SET sent_at = now() WHERE id = $1`, d.id)
		}
		if err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// Consume applies an event's effect once: the processed row and the
// effect commit together, and a duplicate finds the processed row.
func Consume(ctx context.Context, conn *pgx.Conn, e Event) error {
	var o Order
	if err := json.Unmarshal(e.Payload, &o); err != nil {
		return err
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	tag, err := tx.Exec(ctx, `INSERT INTO simple_processed (event_id) VALUES ($1) ON CONFLICT DO NOTHING`, e.ID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 1 {
		if _, err := tx.Exec(ctx, `INSERT INTO simple_effects (event_id, order_id, amount) VALUES ($1, $2, $3)`, e.ID, o.ID, o.Amount); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}
