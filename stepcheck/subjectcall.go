package stepcheck

import (
	"context"
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/model"
)

// call runs one call of actor a; if it fails, the actor's in-flight work
// is settled before anyone looks at its outcome.
func (m *machine) call(t *rapid.T, a harness.Actor, fn func(ctx context.Context) error) error {
	err := m.do(a, fn)
	if err != nil {
		m.settle(t, a)
	}
	return err
}

// do runs one call of actor a under the per-call deadline.
func (m *machine) do(a harness.Actor, fn func(ctx context.Context) error) error {
	return m.doAs(a, harness.SpentCalls, fn)
}

// doAs is do, its time counted as kind s (a call that ran into its
// deadline as SpentDeadlines). A call that a fault of the harness's own
// keeps from an answer before its deadline has its deadline brought
// forward (watchStalls): it fails as it would have, only sooner.
// Plumbing (a read-back, a reset) is retried instead: see plumb.
func (m *machine) doAs(a harness.Actor, s harness.Spent, fn func(ctx context.Context) error) error {
	if s != harness.SpentReadBacks && s != harness.SpentNone { // together sets it for its calls
		m.called = true // it may have changed what is stored
	}
	if isPlumbing(s) {
		return m.plumb(a, s, fn)
	}
	return m.doWithin(a, s, m.callTimeout(), fn)
}

// doWithin runs one call of actor a under a deadline of timeout.
func (m *machine) doWithin(a harness.Actor, s harness.Spent, timeout time.Duration, fn func(ctx context.Context) error) error {
	ctx, cancel := newCallCtx(m.ctx, timeout)
	defer cancel()
	defer m.watchStalls(a, ctx)()
	if s != harness.SpentNone { // together's calls run at once: it notes nothing
		m.early = ""
		defer func() { m.early = ctx.earlyWhy() }()
	}
	start := time.Now()
	defer func() {
		if s == harness.SpentCalls && ctx.Err() != nil {
			s = harness.SpentDeadlines
			m.sum.Time.CountDeadline(ctx.endedEarly())
		}
		m.since(s, start)
	}()
	defer func() {
		if p := recover(); p != nil {
			m.run.record(harness.Failure{Panic: true, Message: fmt.Sprintf("the subject panicked: %v", p), History: m.hist.Clone()})
			panic(p) // rapid reports it with its traceback
		}
	}()
	return fn(ctx)
}

func (m *machine) outcome(err error) model.Outcome {
	switch {
	case err == nil:
		return model.Done
	case m.subj.Indeterminate(err):
		return model.Unknown
	}
	return model.NotDone
}
