package loopcheck

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// producer is the harness's session on the producer's link: pgx's for a
// Subject's Enqueue, database/sql's (pgx stdlib) for an SQLEnqueuer.
// Both keep one connection across payments and drop it after any error.
type producer interface {
	// begin opens a transaction, connecting first if need be.
	begin(ctx context.Context) (producerTx, error)
	// discard closes the connection abruptly: one in doubt (a statement
	// whose reply may still come) is never reused.
	discard()
	// close ends the session; the producer is usable again after it.
	close()
}

// producerTx is one producer transaction, on either driver.
type producerTx interface {
	enqueue(ctx context.Context, p harness.Payment) error
	commit(ctx context.Context) error
	rollback(ctx context.Context) error
}

// newProducer is the session the subject's enqueue needs.
func (c *check) newProducer() producer {
	conn := func() string { return c.env.ConnString(harness.Actor{Role: harness.Producer}) }
	if sc, ok := capability[SelfCommitter](c.subj); ok {
		return selfProducer{subj: sc}
	}
	if enq, ok := capability[SQLEnqueuer](c.subj); ok {
		return &sqlProducer{connString: conn, enq: enq}
	}
	return &pgxProducer{connString: conn, subj: c.subj}
}

// produce writes one payment in a transaction of the harness's own,
// through the producer's link, and commits or rolls it back. An error
// after COMMIT went out leaves the payment maybe-committed: it may have
// (FIELD-NOTES), so it is neither counted as paid nor as rolled back.
func (c *check) produce(commit bool) { c.produceN(1, commit) }

// produceN writes n payments in one transaction, as a business
// transaction that raises several events does: they become visible to
// the relays at the same instant, so a relay's next claim takes them as
// one batch, whatever the relays' timing.
func (c *check) produceN(n int, commit bool) { c.write(c.newPayments(n), commit) }

// newPayments are the producer's next n payments (at least one), each
// begun now.
func (c *check) newPayments(n int) []harness.Payment {
	ps := make([]harness.Payment, max(n, 1))
	for i := range ps {
		c.pays++
		ps[i] = harness.Payment{ID: fmt.Sprintf("pay-%d", c.pays), MerchantID: fmt.Sprintf("m-%d", c.pays%3), AmountCents: int64(100 * c.pays)}
		c.begun[ps[i].ID] = time.Since(c.bro.start)
	}
	return ps
}

// write writes ps in one producer transaction and commits or rolls it
// back.
func (c *check) write(ps []harness.Payment, commit bool) {
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	action := map[bool]string{true: "Commit", false: "Rollback"}[commit]
	ctx, cancel := context.WithTimeout(c.ctx, c.producerTimeout())
	defer cancel()
	err := transact(ctx, c.prod, commit, ps...)
	c.noteFault(err)
	var ce errCommit
	for _, p := range ps {
		switch {
		case !commit:
			c.voided[p.ID] = true // a failed ROLLBACK changes nothing either
		case err == nil:
			c.paid[p.ID] = true
		case errors.As(err, &ce):
			c.maybe[p.ID] = true // the COMMIT went out: it may have committed
		}
	}
	if err != nil {
		c.prod.discard() // never reuse a connection in doubt
	}
	input := strings.Join(ids, ", ")
	if len(ids) > 1 {
		input += " in one transaction"
	}
	c.record(action, "producer", input, result(err, "ok"))
}

// transact runs one producer transaction: begin, the subject's enqueue
// of each payment, then commit or rollback. It classifies alike on both
// drivers: every error of the commit itself is an errCommit
// (indeterminate), whatever it says, since the COMMIT may have gone out
// and landed with its reply lost. pgx may then call it "conn closed" and
// safe to retry; database/sql may pass on pgx's error, or say
// driver.ErrBadConn, sql.ErrTxDone or the context's error. None of them
// proves that nothing committed, so none is taken to.
func transact(ctx context.Context, prod producer, commit bool, ps ...harness.Payment) error {
	tx, err := prod.begin(ctx)
	if err != nil {
		return err
	}
	for _, p := range ps {
		if err := tx.enqueue(ctx, p); err != nil {
			_ = tx.rollback(ctx)
			return err
		}
	}
	if !commit {
		return tx.rollback(ctx)
	}
	if err := tx.commit(ctx); err != nil {
		return errCommit{err}
	}
	return nil
}

// faultyProducerTimeout bounds a producer call while the harness has a
// fault on the producer's link: a partitioned call cannot finish, and
// waiting out the whole CallTimeout for each one stretched schedules (and
// their shrinking) by seconds per commit. Ending it early is honest: a
// COMMIT that went out stays maybe-committed, whatever the deadline.
const faultyProducerTimeout = 300 * time.Millisecond

func (c *check) producerTimeout() time.Duration {
	if c.net.Faulty(harness.Actor{Role: harness.Producer}.String()) {
		return min(faultyProducerTimeout, c.opts.CallTimeout)
	}
	return c.opts.CallTimeout
}

type errCommit struct{ error }

func (e errCommit) Unwrap() error { return e.error }
