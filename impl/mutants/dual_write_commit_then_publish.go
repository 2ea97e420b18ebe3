package mutants

import (
	"context"
	"encoding/json"
	"time"

	"github.com/outboxcheck/outboxcheck/impl"
)

// DualWriteCommitThenPublish copies the code the outbox pattern exists to
// replace: commit the business row, then publish to the broker from the
// request path, with no outbox row. A crash or a refused publish between the
// two loses the event for good; nothing records that it was ever owed.
var DualWriteCommitThenPublish = Mutant{
	Name:  "dual-write-commit-then-publish",
	Bug:   "dual write with no outbox: commit the payment, then publish; a failure in between loses the event",
	Kills: "no-loss",
	Producer: func(p *impl.Producer, broker impl.Publisher) Writer {
		return dualWriter{p: p, broker: broker}
	},
}

type dualWriter struct {
	p             *impl.Producer
	broker        impl.Publisher
	publishFirst  bool // publish, then commit (DualWritePublishThenCommit)
	keepOutboxRow bool
}

func (w dualWriter) CreatePayment(ctx context.Context, pay impl.Payment, now time.Time) (string, error) {
	return w.write(ctx, pay, now, true)
}

func (w dualWriter) AbandonPayment(ctx context.Context, pay impl.Payment, now time.Time) error {
	_, err := w.write(ctx, pay, now, false)
	return err
}

func (w dualWriter) write(ctx context.Context, pay impl.Payment, now time.Time, commit bool) (string, error) {
	conn, err := w.p.Session.Conn(ctx)
	if err != nil {
		return "", err
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Rollback(ctx)
	var id string
	if w.keepOutboxRow {
		if id, err = w.p.Write(ctx, tx, pay, now); err != nil {
			return "", err
		}
	} else {
		id = w.p.IDs.NewID()
		if _, err := tx.Exec(ctx, `INSERT INTO payments (id, merchant_id, amount_cents, created_at) VALUES ($1, $2, $3, $4)`,
			pay.ID, pay.MerchantID, pay.AmountCents, now); err != nil {
			return "", err
		}
	}
	payload, err := json.Marshal(pay)
	if err != nil {
		return "", err
	}
	if w.keepOutboxRow { // the payload exactly as the row keeps it
		if err := tx.QueryRow(ctx, `SELECT payload FROM outbox_events WHERE id = $1`, id).Scan(&payload); err != nil {
			return "", err
		}
	}
	msg := impl.Message{ID: id, Type: impl.EventTypePaymentSucceeded, AggregateID: pay.ID, Sequence: 1, OccurredAt: now, Payload: payload}
	if w.publishFirst {
		if err := w.broker.Publish(ctx, msg); err != nil {
			return "", err
		}
	}
	if !commit {
		return "", tx.Rollback(ctx)
	}
	if err := tx.Commit(ctx); err != nil {
		return id, err
	}
	if !w.publishFirst {
		return id, w.broker.Publish(ctx, msg)
	}
	return id, nil
}
