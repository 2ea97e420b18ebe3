package mutants

import (
	"context"
	"encoding/json"

	"github.com/outboxcheck/outboxcheck/impl"
)

// ConsumerAcksBeforeCommit acknowledges the message as soon as its writes
// are issued, then commits (auto-ack, or an ack in a defer that runs first).
// A crash between the ack and the commit loses the effect: the broker will
// never redeliver a message it was told is done.
var ConsumerAcksBeforeCommit = Mutant{
	Name:  "consumer-acks-before-commit",
	Bug:   "consumer acknowledges before its transaction commits",
	Kills: "effect-exactly-once",
	Consumer: func(s *impl.Session) Handler {
		return ackFirstConsumer{s}
	},
}

type ackFirstConsumer struct{ s *impl.Session }

// Handle returns nil (the acknowledgement) once the ack has gone out,
// whatever happens to the commit after it.
func (c ackFirstConsumer) Handle(ctx context.Context, msg impl.Message, fp impl.Failpoints) error {
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
	tag, err := tx.Exec(ctx, `INSERT INTO merchant.inbox (event_id) VALUES ($1) ON CONFLICT DO NOTHING`, msg.ID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 1 {
		if _, err := tx.Exec(ctx, `INSERT INTO merchant.ledger (payment_id, event_id, merchant_id, amount_cents)
			VALUES ($1, $2, $3, $4)`, pay.ID, msg.ID, pay.MerchantID, pay.AmountCents); err != nil {
			return err
		}
	}
	// The ack goes out here. From now on the broker considers it done.
	if fp != nil && fp(impl.BeforeCommit) != nil {
		return nil // crashed after acking: the message is gone, the effect never commits
	}
	_ = tx.Commit(ctx)
	return nil
}
