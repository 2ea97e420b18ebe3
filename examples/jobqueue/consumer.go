package jobqueue

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Credit is the merchant service's handler of a payment.succeeded event:
// the inbox row and the income row commit in one transaction, so the
// merchant is credited once per event however often it arrives. hook, if
// set, runs before the commit and after it (a test's crash points): an
// error from it ends Credit there.
func Credit(ctx context.Context, conn *pgx.Conn, eventID string, args []byte, hook func(committed bool) error) error {
	var p Payment
	if err := json.Unmarshal(args, &p); err != nil {
		return fmt.Errorf("args of %s: %w", eventID, err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	tag, err := tx.Exec(ctx, `INSERT INTO jq_inbox (event_id) VALUES ($1) ON CONFLICT DO NOTHING`, eventID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 1 {
		if _, err := tx.Exec(ctx, `INSERT INTO jq_income (payment_id, event_id, merchant_id, amount_cents) VALUES ($1, $2, $3, $4)`,
			p.ID, eventID, p.MerchantID, p.AmountCents); err != nil {
			return err
		}
	}
	if hook != nil {
		if err := hook(false); err != nil {
			return err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	if hook != nil {
		return hook(true)
	}
	return nil
}
