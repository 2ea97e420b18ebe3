package loopcheck

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/properties"
)

// produce writes one payment in a transaction of the harness's own,
// through the producer's link, and commits or rolls it back. An error
// after COMMIT went out leaves the payment maybe-committed: it may have
// (FIELD-NOTES), so it is neither counted as paid nor as rolled back.
func (c *check) produce(commit bool) {
	c.pays++
	p := properties.Payment{ID: fmt.Sprintf("pay-%d", c.pays), MerchantID: fmt.Sprintf("m-%d", c.pays%3), AmountCents: int64(100 * c.pays)}
	action := map[bool]string{true: "Commit", false: "Rollback"}[commit]
	ctx, cancel := context.WithTimeout(c.ctx, c.producerTimeout())
	defer cancel()
	err := func() error {
		if c.prod == nil || c.prod.IsClosed() {
			conn, err := pgx.Connect(ctx, c.env.ConnString(properties.Actor{Role: properties.Producer}))
			if err != nil {
				return err
			}
			c.prod = conn
		}
		tx, err := c.prod.Begin(ctx)
		if err != nil {
			return err
		}
		if err := c.subj.Enqueue(ctx, tx, p); err != nil {
			tx.Rollback(ctx)
			return err
		}
		if !commit {
			return tx.Rollback(ctx)
		}
		if err := tx.Commit(ctx); err != nil {
			return errCommit{err}
		}
		return nil
	}()
	var ce errCommit
	switch {
	case !commit:
		c.voided[p.ID] = true // a failed ROLLBACK changes nothing either
	case err == nil:
		c.paid[p.ID] = true
	case errors.As(err, &ce):
		c.maybe[p.ID] = true // the COMMIT went out: it may have committed
	}
	if err != nil && c.prod != nil {
		_ = c.prod.PgConn().Conn().Close() // never reuse a connection in doubt
	}
	c.record(action, "producer", p.ID, result(err, "ok"))
}

// faultyProducerTimeout bounds a producer call while the harness has a
// fault on the producer's link: a partitioned call cannot finish, and
// waiting out the whole CallTimeout for each one stretched schedules (and
// their shrinking) by seconds per commit. Ending it early is honest: a
// COMMIT that went out stays maybe-committed, whatever the deadline.
const faultyProducerTimeout = 300 * time.Millisecond

func (c *check) producerTimeout() time.Duration {
	if c.net.Faulty(properties.Actor{Role: properties.Producer}.String()) {
		return min(faultyProducerTimeout, c.opts.CallTimeout)
	}
	return c.opts.CallTimeout
}

type errCommit struct{ error }

func (e errCommit) Unwrap() error { return e.error }
