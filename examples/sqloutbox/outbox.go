// Package sqloutbox is an outbox for database/sql alone (any PostgreSQL
// driver; its test registers pgx's stdlib as "pgx"), in a shape of its
// own: the producer writes the payment and its message in the caller's
// *sql.Tx; a relay leases due messages in one statement (FOR UPDATE SKIP
// LOCKED, a lease token per message and an expiry), publishes outside any
// transaction, deletes what the broker took under its own lease, and on a
// failed publish counts the attempt and backs off exponentially, or moves
// the message to a dead-letter table at MaxAttempts. An expired lease makes
// a message due again. Time is the database's now(). The consumer records
// the message id in its inbox and credits the merchant in one transaction,
// with the payment id as the credit's unique key. Its test runs it through
// outboxcheck's loop contract (loopcheck_test.go); it knows nothing of
// outboxcheck.
package sqloutbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

// Schema creates the tables; safe to run twice.
const Schema = `
CREATE TABLE IF NOT EXISTS sqlo_payments (
    id           text PRIMARY KEY,
    merchant_id  text NOT NULL,
    amount_cents bigint NOT NULL,
    paid_at      timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS sqlo_messages (
    message_id   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    topic        text NOT NULL,
    key          text NOT NULL,
    body         jsonb NOT NULL,
    enqueued_at  timestamptz NOT NULL DEFAULT now(),
    due_at       timestamptz NOT NULL DEFAULT now(),
    attempts     integer NOT NULL DEFAULT 0,
    lease_token  uuid,
    leased_until timestamptz,
    last_error   text
);
CREATE INDEX IF NOT EXISTS sqlo_messages_due ON sqlo_messages (due_at, enqueued_at);
CREATE TABLE IF NOT EXISTS sqlo_dead_letters (
    message_id uuid PRIMARY KEY,
    topic      text NOT NULL,
    key        text NOT NULL,
    body       jsonb NOT NULL,
    attempts   integer NOT NULL,
    last_error text,
    died_at    timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS sqlo_inbox (
    message_id  uuid PRIMARY KEY,
    received_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS sqlo_credits (
    payment_id   text PRIMARY KEY,
    message_id   uuid NOT NULL,
    merchant_id  text NOT NULL,
    amount_cents bigint NOT NULL
);`

// TopicPaymentSucceeded is the topic of a payment's message.
const TopicPaymentSucceeded = "payment.succeeded"

// Payment is the business fact, and its message's body.
type Payment struct {
	ID          string `json:"payment_id"`
	MerchantID  string `json:"merchant_id"`
	AmountCents int64  `json:"amount_cents"`
}

// Message is what goes on the wire. ID is fixed when the payment is
// written and never changes: every retry sends the same.
type Message struct {
	ID    string
	Topic string
	Key   string // the payment's id
	Body  []byte
}

// RecordPayment writes p and its message in the caller's transaction:
// both commit, or neither.
func RecordPayment(ctx context.Context, tx *sql.Tx, p Payment) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO sqlo_payments (id, merchant_id, amount_cents) VALUES ($1, $2, $3)`,
		p.ID, p.MerchantID, p.AmountCents); err != nil {
		return err
	}
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO sqlo_messages (topic, key, body) VALUES ($1, $2, $3)`,
		TopicPaymentSucceeded, p.ID, body)
	return err
}

// errStopped: the relay's context ended while it sent.
var errStopped = errors.New("sqloutbox: relay stopped")

// Relay sends due messages. Run it in as many processes as you like: a
// message is leased to one relay at a time, and a lease that runs out
// (its relay died or is slow) makes it due again.
type Relay struct {
	DB      *sql.DB
	Publish func(ctx context.Context, m Message) error
	// Lease is how long a relay holds a message; default 30 s.
	Lease time.Duration
	// Backoff is the wait after a message's first failed publish; it
	// doubles with every failure, up to MaxBackoff. Defaults 1 s, 5 min.
	Backoff, MaxBackoff time.Duration
	// MaxAttempts failed publishes move a message to the dead letters;
	// default 10.
	MaxAttempts int
	Batch       int           // messages per lease; default 10
	Poll        time.Duration // wait when nothing is due; default 1 s
	Timeout     time.Duration // bound on each statement and each publish; default 5 s
}

// Run sends due messages until ctx is done, and then returns ctx's error.
// A failed round (the database unreachable, a statement timed out) is
// tried again after Poll: only ctx ends it.
func (r *Relay) Run(ctx context.Context) error {
	for {
		n, err := r.round(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil && n > 0 {
			continue // there may be more
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(def(r.Poll, time.Second)):
		}
	}
}

// round leases a batch and sends it; n is how many it leased. A
// message whose outcome could not be recorded stays leased until its
// lease runs out, and is then sent again: the rest are sent meanwhile.
func (r *Relay) round(ctx context.Context) (n int, err error) {
	batch, err := r.lease(ctx)
	for _, l := range batch {
		serr := r.send(ctx, l)
		if errors.Is(serr, errStopped) {
			return len(batch), serr
		}
		err = errors.Join(err, serr)
	}
	return len(batch), err
}

// leased is a message under this relay's lease.
type leased struct {
	Message
	token string
}

const leaseDue = `
WITH due AS (
    SELECT message_id FROM sqlo_messages
    WHERE due_at <= now() AND (leased_until IS NULL OR leased_until <= now())
    ORDER BY due_at, enqueued_at
    LIMIT $1
    FOR UPDATE SKIP LOCKED)
UPDATE sqlo_messages m
SET lease_token = gen_random_uuid(), leased_until = now() + $2::bigint * interval '1 millisecond'
FROM due WHERE m.message_id = due.message_id
RETURNING m.message_id::text, m.lease_token::text, m.topic, m.key, m.body`

func (r *Relay) lease(ctx context.Context) ([]leased, error) {
	ctx, cancel := context.WithTimeout(ctx, def(r.Timeout, 5*time.Second))
	defer cancel()
	rows, err := r.DB.QueryContext(ctx, leaseDue, defInt(r.Batch, 10), def(r.Lease, 30*time.Second).Milliseconds())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []leased
	for rows.Next() {
		var l leased
		if err := rows.Scan(&l.ID, &l.token, &l.Topic, &l.Key, &l.Body); err != nil {
			return out, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// send publishes one leased message and records the outcome under its
// lease: a relay whose lease was taken over records nothing. When ctx
// ends mid-way it records nothing either: the lease runs out and the
// message is sent again (at least once).
func (r *Relay) send(ctx context.Context, l leased) error {
	timeout := def(r.Timeout, 5*time.Second)
	pctx, cancel := context.WithTimeout(ctx, timeout)
	perr := r.Publish(pctx, l.Message)
	cancel()
	if ctx.Err() != nil {
		return errStopped
	}
	ctx, cancel = context.WithTimeout(ctx, timeout)
	defer cancel()
	if perr == nil {
		_, err := r.DB.ExecContext(ctx, `DELETE FROM sqlo_messages WHERE message_id = $1 AND lease_token = $2`, l.ID, l.token)
		return err
	}
	_, err := r.DB.ExecContext(ctx, failed, l.ID, l.token, perr.Error(), defInt(r.MaxAttempts, 10),
		def(r.Backoff, time.Second).Milliseconds(), def(r.MaxBackoff, 5*time.Minute).Milliseconds())
	return err
}

// failed counts a failed publish under the lease: at MaxAttempts ($4) the
// message moves to the dead letters, else it is due again after its
// backoff ($5 ms doubled per earlier failure, at most $6 ms). The two
// branches exclude each other, so one statement does either.
const failed = `
WITH dead AS (
    DELETE FROM sqlo_messages
    WHERE message_id = $1 AND lease_token = $2 AND attempts + 1 >= $4
    RETURNING message_id, topic, key, body, attempts + 1 AS attempts),
buried AS (
    INSERT INTO sqlo_dead_letters (message_id, topic, key, body, attempts, last_error)
    SELECT message_id, topic, key, body, attempts, $3 FROM dead)
UPDATE sqlo_messages
SET attempts = attempts + 1, last_error = $3, lease_token = NULL, leased_until = NULL,
    due_at = now() + least($5::bigint << least(attempts, 30), $6::bigint) * interval '1 millisecond'
WHERE message_id = $1 AND lease_token = $2 AND attempts + 1 < $4`

// Consumer credits merchants for the payments it is told of, once per
// payment however often a message comes.
type Consumer struct {
	DB *sql.DB
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
	if err := json.Unmarshal(m.Body, &p); err != nil {
		return err
	}
	tx, err := c.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO sqlo_inbox (message_id) VALUES ($1) ON CONFLICT DO NOTHING`, m.ID)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 1 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO sqlo_credits (payment_id, message_id, merchant_id, amount_cents) VALUES ($1, $2, $3, $4)`,
			p.ID, m.ID, p.MerchantID, p.AmountCents); err != nil {
			return err
		}
	}
	if err := c.hook(BeforeCommit); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
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

func def(d, v time.Duration) time.Duration {
	if d <= 0 {
		return v
	}
	return d
}

func defInt(n, v int) int {
	if n <= 0 {
		return v
	}
	return n
}
