package mutants

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/outboxcheck/outboxcheck/impl"
)

// ProducerRetriesCommit retries the whole business transaction when the
// COMMIT fails with an error pgx calls safe to retry. A lost COMMIT reply
// looks exactly like that (FIELD-NOTES), yet the first attempt committed:
// the retry writes the business fact a second time under a new event_id
// (its payment insert is "idempotent", its event insert is not), and the
// merchant is told twice about one payment.
var ProducerRetriesCommit = Mutant{
	Name:        "producer-retries-commit",
	Bug:         "producer retries the whole transaction on a retryable-looking COMMIT error: one payment, two events",
	Kills:       "stable-id",
	NeedsFaults: true,
	Producer: func(p *impl.Producer, _ impl.Publisher) Writer {
		return retryingProducer{p}
	},
}

type retryingProducer struct{ *impl.Producer }

func (p retryingProducer) CreatePayment(ctx context.Context, pay impl.Payment, now time.Time) (string, error) {
	for attempt := 0; ; attempt++ {
		id, err := p.once(ctx, pay, now)
		if err == nil || attempt == 2 || !pgconn.SafeToRetry(err) {
			return id, err
		}
	}
}

func (p retryingProducer) once(ctx context.Context, pay impl.Payment, now time.Time) (string, error) {
	conn, err := p.Session.Conn(ctx)
	if err != nil {
		return "", err
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Rollback(ctx) // with ctx gone, pgx closes the connection and the server rolls back
	if _, err := tx.Exec(ctx, `INSERT INTO payments (id, merchant_id, amount_cents, created_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING`, pay.ID, pay.MerchantID, pay.AmountCents, now); err != nil {
		return "", err
	}
	id := p.IDs.NewID()
	if _, err := tx.Exec(ctx, `INSERT INTO outbox_events (id, aggregate_id, event_type, sequence, payload, status, available_at, created_at)
		VALUES ($1, $2, $3, 1, json_build_object('payment_id', $2::text, 'merchant_id', $4::text, 'amount_cents', $5::bigint), 'PENDING', $6, $6)`,
		id, pay.ID, impl.EventTypePaymentSucceeded, pay.MerchantID, pay.AmountCents, now); err != nil {
		return "", err
	}
	return id, tx.Commit(ctx)
}
