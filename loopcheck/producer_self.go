package loopcheck

import (
	"context"

	"github.com/outboxcheck/outboxcheck/harness"
)

// SelfCommitter is a Subject whose producer runs its business
// transactions itself (a subject in another process: proccheck): Produce
// writes ps and their events in one transaction of its own, on the
// producer's link (Env.ConnString), and commits it, or rolls it back when
// commit is false. The harness then never calls Enqueue. An error with
// commit true leaves the payments maybe-committed (a lost COMMIT reply
// looks like any other error), never failed; with commit false, the
// payments are rolled back whatever the error.
type SelfCommitter interface {
	Produce(ctx context.Context, ps []harness.Payment, commit bool) error
}

// selfProducer is the producer for a SelfCommitter: a transaction's
// payments are handed over at its commit or rollback, in one call.
type selfProducer struct{ subj SelfCommitter }

func (s selfProducer) begin(context.Context) (producerTx, error) {
	return &selfTx{subj: s.subj}, nil
}

// discard and close have nothing to drop: the subject keeps its own
// sessions, and ends one in doubt itself.
func (selfProducer) discard() {}
func (selfProducer) close()   {}

type selfTx struct {
	subj SelfCommitter
	ps   []harness.Payment
}

func (t *selfTx) enqueue(_ context.Context, p harness.Payment) error {
	t.ps = append(t.ps, p)
	return nil
}
func (t *selfTx) commit(ctx context.Context) error   { return t.subj.Produce(ctx, t.ps, true) }
func (t *selfTx) rollback(ctx context.Context) error { return t.subj.Produce(ctx, t.ps, false) }
