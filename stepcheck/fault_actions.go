package stepcheck

import (
	"context"
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/model"
)

// faultable lists the actors whose links can be partitioned.
func (m *machine) faultable() []harness.Actor { return faultable(m.opts) }

func faultable(o Options) []harness.Actor {
	out := []harness.Actor{{Role: harness.Producer}}
	for d := range o.Dispatchers {
		out = append(out, harness.Actor{Role: harness.Dispatcher, N: d})
	}
	for c := range o.Consumers {
		out = append(out, harness.Actor{Role: harness.Consumer, N: c})
	}
	return out
}

// Partition puts a network fault on one actor's link. It strikes after
// some more client requests, or at the next COMMIT or statement, so it
// can land inside a transaction: on its COMMIT, say.
func (m *machine) Partition(t *rapid.T) {
	a, f := m.drawPartition(t)
	m.record("Partition", a, describeFault(f))
	m.freshen(t, a)
	if err := m.links.net.Inject(a.String(), f); err != nil {
		m.infra(t, "partition", err)
	}
}

func describeFault(f faults.Fault) string {
	var s string
	switch {
	case f.AtCommit:
		s = fmt.Sprintf("%s at the next COMMIT", f.Kind)
	case f.AtStatement:
		s = fmt.Sprintf("%s at the next statement", f.Kind)
	default:
		s = fmt.Sprintf("%s after %d requests", f.Kind, f.After)
	}
	if f.Kind == faults.Latency {
		s += fmt.Sprintf(", %d ms", f.DelayMs)
	}
	return s
}

// Heal removes the fault from a partitioned link and settles the actor.
func (m *machine) Heal(t *rapid.T) {
	var faulty []harness.Actor
	for _, a := range m.faultable() {
		if m.links.net.Faulty(a.String()) {
			faulty = append(faulty, a)
		}
	}
	if len(faulty) == 0 {
		skip("no partition")
	}
	a := rapid.SampledFrom(faulty).Draw(t, "link")
	m.record("Heal", a, "")
	m.heal(t, a)
}

func (m *machine) heal(t *rapid.T, a harness.Actor) {
	m.links.net.Heal(a.String())
	m.settle(t, a)
}

// CrashDispatcherMidMark kills a dispatcher inside MarkPublished or
// MarkFailed: before the request that runs the mark leaves, or after it
// reached the server (and ran) and before the reply. Connecting and
// preparing the statement go through: the fault arms at the statement.
// The outcome is unknown to everyone but the database.
func (m *machine) CrashDispatcherMidMark(t *rapid.T) {
	type ref struct{ d, i int }
	var refs []ref
	for d := range m.held {
		for i, h := range m.held[d] {
			if h.state != unpublished && !m.crashed[d] {
				refs = append(refs, ref{d, i})
			}
		}
	}
	if len(refs) == 0 {
		skip("no dispatcher about to mark")
	}
	r := refs[rapid.IntRange(0, len(refs)-1).Draw(t, "claim")]
	afterSend := rapid.Bool().Draw(t, "after send")
	h := m.held[r.d][r.i]
	a := harness.Actor{Role: harness.Dispatcher, N: r.d}
	kind := faults.Reset
	if afterSend {
		kind = faults.LostReply
	}
	e := m.record("CrashMidMark", a, fmt.Sprintf("%s (claim %s), %s", h.c.ID, h.c.ClaimID, map[bool]string{false: "before the request leaves", true: "after it reached the server"}[afterSend]))
	if !m.opts.Semantics.LockHeld { // a lock-held mark must run in its claim's session, of this check already
		m.freshen(t, a)
	}
	if err := m.links.net.Inject(a.String(), faults.Fault{Kind: kind, AtStatement: true}); err != nil {
		m.infra(t, "crash mid-mark", err)
	}
	var changed bool
	err := m.do(a, func(ctx context.Context) (err error) {
		if h.state == acked {
			changed, err = m.subj.MarkPublished(ctx, r.d, h.c, m.m.Now)
		} else {
			changed, err = m.subj.MarkFailed(ctx, r.d, h.c, m.m.Now, h.cause)
		}
		return
	})
	m.finish(e, err, fmt.Sprintf("changed=%v (died before it could act on it)", changed))
	o := m.outcome(err)
	var ps []model.Problem
	if h.state == acked { // before the crash: a lock-held mark ends with its session
		m.m, ps = model.MarkPublished(m.m, h.c.ID, h.c.ClaimID, changed, o)
	} else {
		m.m, ps = model.MarkFailed(m.m, h.c.ID, h.c.ClaimID, changed, o)
	}
	m.heal(t, a)
	m.crash(a)
	m.held[r.d], m.crashed[r.d] = nil, true
	m.sum.Crashes.DispatcherMidMark++
	m.report(t, ps)
}

// CrashDatabase SIGKILLs the harness-owned PostgreSQL and restarts it.
// Every session dies; committed data must survive.
func (m *machine) CrashDatabase(t *rapid.T) {
	if m.opts.Draw == DrawSwarm && m.dbCrashed {
		skip("the database crashed once in this check")
	}
	m.dbCrashed = true
	m.record("CrashDatabase", harness.Actor{Role: harness.Operator}, "SIGKILL postmaster and backends, restart, recover")
	defer m.since(harness.SpentDBCrash, time.Now())
	ctx, cancel := context.WithTimeout(m.ctx, time.Minute)
	defer cancel()
	if err := m.opts.CrashDatabase(ctx); err != nil {
		m.infra(t, "crash database", err)
	}
	m.sum.Crashes.Database++
	m.prior = nil // recovery may change what is stored without a transaction
	if err := withRetries(m.ctx, 0, m.harness.reconnect); err != nil {
		m.infra(t, "reconnect after database crash", err)
	}
	for _, a := range m.faultable() {
		m.crash(a) // their sockets are dead; let them reconnect (after the harness: a crash may ask it about sessions)
	}
	m.subj.Crash(harness.Actor{Role: harness.Operator})
	m.run.clock.forget() // recovery may have lost its last setting
	m.syncClock(t)
}
