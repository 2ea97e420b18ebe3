package mutants

import (
	"context"
	"encoding/json"

	"github.com/outboxcheck/outboxcheck/impl"
)

// InboxSelectThenInsert copies the inbox that asks "have I seen this
// event?" with a SELECT and records it with a plain INSERT, on tables with
// no unique key. The check and the insert are two statements, and at READ
// COMMITTED two consumers handling one event at once (a redelivery racing
// the first delivery) both find nothing, both insert, and both credit the
// merchant. One delivery at a time, it dedupes perfectly.
var InboxSelectThenInsert = Mutant{
	Name:             "inbox-select-then-insert",
	Bug:              "inbox checked by SELECT then INSERT with no unique key: concurrent deliveries of one event both apply it",
	Kills:            "effect-at-most-once",
	NeedsConcurrency: true,
	// The reference's keys (inbox primary key, ledger payment_id) would
	// turn the race into a constraint error; this schema has neither.
	Schema: `CREATE SCHEMA IF NOT EXISTS merchant;
CREATE TABLE IF NOT EXISTS merchant.inbox (
    event_id    uuid NOT NULL,
    received_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE IF NOT EXISTS merchant.ledger (
    id           bigserial PRIMARY KEY,
    payment_id   text NOT NULL,
    event_id     uuid NOT NULL,
    merchant_id  text NOT NULL,
    amount_cents bigint NOT NULL
);`,
	Consumer: func(s *impl.Session) Handler {
		return selectThenInsertConsumer{s}
	},
}

type selectThenInsertConsumer struct{ s *impl.Session }

func (c selectThenInsertConsumer) Handle(ctx context.Context, msg impl.Message, fp impl.Failpoints) error {
	var pay impl.Payment
	if err := json.Unmarshal(msg.Payload, &pay); err != nil {
		return err
	}
	conn, err := c.s.Conn(ctx)
	if err != nil {
		return err
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) // with ctx gone, pgx closes the connection and the server rolls back
	var seen bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM merchant.inbox WHERE event_id = $1)`, msg.ID).Scan(&seen); err != nil {
		return err
	}
	if seen {
		return nil // "already handled"
	}
	if _, err := tx.Exec(ctx, `INSERT INTO merchant.inbox (event_id) VALUES ($1)`, msg.ID); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx,
		`INSERT INTO merchant.ledger (payment_id, event_id, merchant_id, amount_cents) VALUES ($1, $2, $3, $4)`,
		pay.ID, msg.ID, pay.MerchantID, pay.AmountCents); err != nil {
		return err
	}
	if fp != nil {
		if err := fp(impl.BeforeCommit); err != nil {
			return err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		// The COMMIT went out: it may have applied (FIELD-NOTES).
		return &impl.OpError{Op: "handle", Indeterminate: true, Err: err}
	}
	if fp != nil {
		return fp(impl.AfterCommit)
	}
	return nil
}
