package impl

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
)

// EventTypePaymentSucceeded is the one event type the reference business
// emits (the seed's exercise: payment succeeded → credit the merchant).
const EventTypePaymentSucceeded = "payment.succeeded"

// Payment is the producer's business row.
type Payment struct {
	ID          string `json:"payment_id"`
	MerchantID  string `json:"merchant_id"`
	AmountCents int64  `json:"amount_cents"`
}

// Producer writes payments together with their outbox events.
type Producer struct {
	Session *Session
	IDs     IDs
}

// Write inserts the payment and its event inside the caller's transaction
// and returns the event_id, fixed here once and for all.
func (p *Producer) Write(ctx context.Context, tx pgx.Tx, pay Payment, now time.Time) (string, error) {
	if _, err := tx.Exec(ctx,
		`INSERT INTO payments (id, merchant_id, amount_cents, created_at) VALUES ($1, $2, $3, $4)`,
		pay.ID, pay.MerchantID, pay.AmountCents, now); err != nil {
		return "", err
	}
	payload, err := json.Marshal(pay)
	if err != nil {
		return "", err
	}
	eventID := p.IDs.NewID()
	_, err = tx.Exec(ctx,
		`INSERT INTO outbox_events (id, aggregate_id, event_type, sequence, payload, status, available_at, created_at)
		 VALUES ($1, $2, $3, 1, $4, 'PENDING', $5, $5)`,
		eventID, pay.ID, EventTypePaymentSucceeded, payload, now)
	return eventID, err
}

// CreatePayment commits the payment and its event in one transaction. An
// *OpError says whether a failure may still have committed.
func (p *Producer) CreatePayment(ctx context.Context, pay Payment, now time.Time) (string, error) {
	return p.run(ctx, pay, now, true)
}

// AbandonPayment writes the payment and its event, then rolls back, as a
// business transaction that fails after writing does.
func (p *Producer) AbandonPayment(ctx context.Context, pay Payment, now time.Time) error {
	_, err := p.run(ctx, pay, now, false)
	return err
}

func (p *Producer) run(ctx context.Context, pay Payment, now time.Time, commit bool) (string, error) {
	const op = "create payment"
	conn, err := p.Session.Conn(ctx)
	if err != nil {
		return "", definite(op, err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return "", definite(op, err)
	}
	eventID, err := p.Write(ctx, tx, pay, now)
	if err != nil {
		_ = tx.Rollback(ctx)
		return "", definite(op, err)
	}
	if !commit {
		// Nothing commits without a COMMIT: a failed ROLLBACK (a dead
		// connection) changes nothing, so it is not reported.
		_ = tx.Rollback(ctx)
		return "", nil
	}
	if err := tx.Commit(ctx); err != nil {
		return eventID, afterSend(op, err)
	}
	return eventID, nil
}
