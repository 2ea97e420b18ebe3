package forwarder

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PaymentsSchema creates the business tables: the producer's payments,
// and the consumer's inbox and credits. Safe to run twice.
const PaymentsSchema = `
CREATE TABLE IF NOT EXISTS fwd_payments (
    id           text PRIMARY KEY,
    merchant_id  text NOT NULL,
    amount_cents bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS fwd_inbox (
    message_id uuid PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS fwd_credits (
    payment_id   text PRIMARY KEY,
    message_id   uuid NOT NULL,
    merchant_id  text NOT NULL,
    amount_cents bigint NOT NULL
);`

// TopicPaymentSucceeded is the topic of a payment's message.
const TopicPaymentSucceeded = "payment.succeeded"

// Payment is the business fact, and its message's payload.
type Payment struct {
	ID          string `json:"payment_id"`
	MerchantID  string `json:"merchant_id"`
	AmountCents int64  `json:"amount_cents"`
}

// RecordPayment writes p and its message, keyed by the payment's id, in
// the caller's transaction: both commit, or neither.
func RecordPayment(ctx context.Context, tx pgx.Tx, p Payment) error {
	if _, err := tx.Exec(ctx, `INSERT INTO fwd_payments (id, merchant_id, amount_cents) VALUES ($1, $2, $3)`,
		p.ID, p.MerchantID, p.AmountCents); err != nil {
		return err
	}
	payload, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return Write(ctx, tx, TopicPaymentSucceeded, p.ID, payload)
}

// Consumer credits merchants for the payments it is told of, once per
// payment however often a message comes.
type Consumer struct {
	DB *pgxpool.Pool
	// Hook, if set, is called at BeforeCommit (the credit written, not
	// committed) and AfterCommit; an error from it ends Credit there.
	Hook func(point string) error
}

// Hook points.
const (
	BeforeCommit = "before-commit"
	AfterCommit  = "after-commit"
)

// Credit applies m: the inbox row and the credit commit together, and a
// message seen before finds its inbox row and changes nothing. A nil
// error means m may be acknowledged.
func (c *Consumer) Credit(ctx context.Context, m Message) error {
	var p Payment
	if err := json.Unmarshal(m.Payload, &p); err != nil {
		return err
	}
	tx, err := c.DB.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) // a no-op after Commit; with ctx done, pgx closes the connection
	tag, err := tx.Exec(ctx, `INSERT INTO fwd_inbox (message_id) VALUES ($1) ON CONFLICT DO NOTHING`, m.ID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 1 {
		if _, err := tx.Exec(ctx, `INSERT INTO fwd_credits (payment_id, message_id, merchant_id, amount_cents) VALUES ($1, $2, $3, $4)`,
			p.ID, m.ID, p.MerchantID, p.AmountCents); err != nil {
			return err
		}
	}
	if err := c.hook(BeforeCommit); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	return c.hook(AfterCommit)
}

func (c *Consumer) hook(point string) error {
	if c.Hook == nil {
		return nil
	}
	return c.Hook(point)
}
