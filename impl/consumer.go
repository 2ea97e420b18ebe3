package impl

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Failpoint names where a consumer may be stopped by a harness.
type Failpoint string

const (
	BeforeCommit Failpoint = "before-commit"
	AfterCommit  Failpoint = "after-commit" // committed, not yet acknowledged
)

// Failpoints lets a harness stop a consumer at a named point: a non-nil
// error ends Handle there at once, as a crash would. Nil means none.
type Failpoints func(Failpoint) error

func (f Failpoints) hit(p Failpoint) error {
	if f == nil {
		return nil
	}
	return f(p)
}

// Consumer is the merchant service: it credits the merchant once per
// payment, deduplicating by event_id in its inbox.
type Consumer struct {
	Session *Session
}

// Handle applies a payment.succeeded message. The inbox insert and the
// ledger credit commit in one transaction; a message already in the inbox
// is a success with no effect. A nil return is the acknowledgement: it only
// happens after the commit.
func (c *Consumer) Handle(ctx context.Context, msg Message, fp Failpoints) error {
	const op = "handle"
	var pay Payment
	if err := json.Unmarshal(msg.Payload, &pay); err != nil {
		return definite(op, fmt.Errorf("payload of %s: %w", msg.ID, err))
	}
	conn, err := c.Session.Conn(ctx)
	if err != nil {
		return definite(op, err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return definite(op, err)
	}
	defer tx.Rollback(ctx) // with ctx gone, pgx closes the connection and the server rolls back
	tag, err := tx.Exec(ctx, `INSERT INTO merchant.inbox (event_id) VALUES ($1) ON CONFLICT DO NOTHING`, msg.ID)
	if err != nil {
		return definite(op, err)
	}
	if tag.RowsAffected() == 1 {
		if _, err := tx.Exec(ctx,
			`INSERT INTO merchant.ledger (payment_id, event_id, merchant_id, amount_cents) VALUES ($1, $2, $3, $4)`,
			pay.ID, msg.ID, pay.MerchantID, pay.AmountCents); err != nil {
			return definite(op, err)
		}
	}
	if err := fp.hit(BeforeCommit); err != nil {
		return definite(op, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return afterSend(op, err)
	}
	if err := fp.hit(AfterCommit); err != nil {
		return &OpError{Op: op, Indeterminate: true, Err: err}
	}
	return nil
}

// Effect is one credit in the merchant ledger.
type Effect struct {
	EventID     string
	PaymentID   string
	MerchantID  string
	AmountCents int64
}

// Effects reads the ledger, ordered by event_id then payment_id.
func (c *Consumer) Effects(ctx context.Context) ([]Effect, error) {
	conn, err := c.Session.Conn(ctx)
	if err != nil {
		return nil, definite("effects", err)
	}
	out, err := collectEffects(conn.Query(ctx, effectsSQL))
	if err != nil {
		return nil, definite("effects", err)
	}
	return out, nil
}

const effectsSQL = `SELECT event_id::text, payment_id, merchant_id, amount_cents
		FROM merchant.ledger ORDER BY event_id, payment_id`

func collectEffects(rows pgx.Rows, err error) ([]Effect, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Effect, error) {
		var e Effect
		return e, r.Scan(&e.EventID, &e.PaymentID, &e.MerchantID, &e.AmountCents)
	})
}
