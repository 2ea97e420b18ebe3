package mutants

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/outboxcheck/outboxcheck/impl"
)

// ConsumerSplitTx records the event in its inbox in one transaction and
// applies the business effect in a second. A crash between the two leaves
// the event marked as seen with no effect; the redelivery is skipped as a
// duplicate, and the merchant is never credited.
var ConsumerSplitTx = Mutant{
	Name:  "consumer-split-tx",
	Bug:   "inbox insert committed in a transaction separate from the business effect",
	Kills: "effect-exactly-once",
	Consumer: func(s *impl.Session) Handler {
		return splitTxConsumer{s}
	},
}

type splitTxConsumer struct{ s *impl.Session }

func (c splitTxConsumer) Handle(ctx context.Context, msg impl.Message, fp impl.Failpoints) error {
	var pay impl.Payment
	if err := json.Unmarshal(msg.Payload, &pay); err != nil {
		return err
	}
	conn, err := c.s.Conn(ctx)
	if err != nil {
		return err
	}
	tag, err := conn.Exec(ctx, `INSERT INTO merchant.inbox (event_id) VALUES ($1) ON CONFLICT DO NOTHING`, msg.ID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return nil // "already handled"
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) // with ctx gone, pgx closes the connection and the server rolls back
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
		return errors.Join(errors.New("commit effect"), err)
	}
	if fp != nil {
		return fp(impl.AfterCommit)
	}
	return nil
}
