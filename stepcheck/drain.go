package stepcheck

import (
	"context"
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/model"
)

// maxDrainRounds bounds the drain: each round moves the clock past every
// lease and backoff, claims everything due, publishes, marks and delivers.
const maxDrainRounds = 8

// drain brings the system to rest and checks liveness: heal, restart the
// dispatchers that hold claims, then dispatch and deliver, with the
// broker accepting everything, until nothing is due and every message is
// acknowledged.
//
// A dispatcher that holds no claim is restarted only if a settle cut its
// link since its subject last heard of a crash (healing settles every
// faulty link, and a drain call must not fail on a session its subject
// still takes for open). Otherwise, between steps, it has nothing in
// flight and its session is as good as a new one: a restart would only
// cost a reconnect, about 4 ms or twenty bare SQL operations.
func (m *machine) drain(t *rapid.T) {
	m.record("Drain", harness.Actor{Role: harness.Operator}, "heal, restart the dispatchers that hold claims or lost their link, dispatch and deliver until quiet")
	m.draining = true
	defer func() { m.draining = false }()
	m.healAll(t)
	for d := range m.held {
		if a := (harness.Actor{Role: harness.Dispatcher, N: d}); len(m.held[d]) > 0 || m.unheard[a] || m.opts.Semantics.LockHeld {
			m.crash(a)
		}
		m.held[d], m.crashed[d] = nil, false
	}
	for round := 0; round < maxDrainRounds; round++ {
		m.passDeadlines(t)
		rescued := m.drainRescue(t)
		claimed := m.drainDispatch(t)
		delivered := m.drainDeliver(t)
		m.Check(t)
		if rescued == 0 && claimed == 0 && delivered == 0 && !m.waiting() {
			break
		}
	}
	m.report(t, model.Liveness(m.m))
}

// passDeadlines moves the clock just past every lease and backoff at
// once (past one that is exactly now too, which under strict edges is not
// due yet), so that a round claims everything waiting and the drain's
// rounds are spent on what comes due again after it (a rescue's delay),
// not on one deadline each.
func (m *machine) passDeadlines(t *rapid.T) {
	next, ok := m.m.LastDeadline()
	if !ok || next.Before(m.m.Now) {
		return
	}
	dt := next.Sub(m.m.Now) + time.Millisecond
	m.record("AdvanceClock", harness.Actor{Role: harness.Operator}, "+"+dt.String()+" (drain)")
	m.advance(t, dt)
}

// waiting reports whether the model still holds a row that comes due, or
// whose lease ends, after now: the drain is not over while one does.
func (m *machine) waiting() bool {
	next, ok := m.m.NextAttemptAt()
	return ok && !next.Before(m.m.Now)
}

// drainRescue runs the subject's rescuer, for a subject whose expired
// leases go back that way. It returns how many rows it re-queued.
func (m *machine) drainRescue(t *rapid.T) int {
	if m.opts.Semantics.Rescue == nil {
		return 0
	}
	e := m.record("Rescue", harness.Actor{Role: harness.Operator}, "re-queue every lease that is over (drain)")
	n, err := m.rescue()
	m.finish(e, err, fmt.Sprintf("re-queued %d", n))
	if err != nil {
		m.infra(t, "drain rescue", err)
	}
	var ps []model.Problem
	m.m, ps = model.Rescue(m.m, n, model.Done)
	m.report(t, ps)
	return n
}

// drainDispatch claims everything due with dispatcher 0 and publishes and
// marks each event. It returns how many events it claimed.
func (m *machine) drainDispatch(t *rapid.T) int {
	const batch = 1000
	got := m.drainClaim(t, batch)
	m.applyClaim(t, 0, batch, got)
	for _, c := range got {
		m.held[0] = []held{{c: c}}
		m.Publish0(t)
	}
	return len(got)
}

// Publish0 publishes and marks dispatcher 0's one held claim, the broker
// accepting.
func (m *machine) Publish0(t *rapid.T) {
	h := m.held[0][0]
	e := m.record("Publish", harness.Actor{Role: harness.Dispatcher}, h.c.ID+" (drain)")
	before := len(m.broker.Log)
	err := m.do(harness.Actor{Role: harness.Dispatcher}, func(ctx context.Context) error { return m.subj.Publish(ctx, 0, h.c, m.broker) })
	m.finish(e, err, "acknowledged")
	m.applyPublishes(t, before)
	m.published = h.c.ClaimID
	m.Check(t) // a subject may mark inside Publish: see it before the mark
	e = m.record("MarkPublished", harness.Actor{Role: harness.Dispatcher}, h.c.ID+" (drain)")
	var changed bool
	err = m.call(t, harness.Actor{Role: harness.Dispatcher}, func(ctx context.Context) (err error) {
		changed, err = m.subj.MarkPublished(ctx, 0, h.c, m.m.Now)
		return
	})
	m.finish(e, err, fmt.Sprintf("changed=%v", changed))
	var ps []model.Problem
	m.m, ps = model.MarkPublished(m.m, h.c.ID, h.c.ClaimID, changed, m.outcome(err))
	m.held[0] = nil
	m.afterDispatcherCall(0, err)
	m.report(t, ps)
}

// drainDeliver hands every message whose event has no acknowledged
// delivery yet to consumer 0, once per round. It returns how many.
func (m *machine) drainDeliver(t *rapid.T) int {
	n := 0
	done := map[string]bool{}
	for i, msg := range m.broker.Log {
		if m.m.Acked[msg.ID] || done[msg.ID] {
			continue
		}
		done[msg.ID] = true
		m.deliver(t, 0, i, "")
		n++
	}
	return n
}

// drainClaim is dispatcher 0's claim of up to limit events in the drain.
// With every fault healed, a claim that fails for a reason not the
// subject's own (ownError) only met a slow machine: its outcome goes to
// the model (a timed-out claim may have taken rows: they come due again
// when its lease ends, which a later round passes) and it is tried again
// on a fresh session with a longer deadline, as plumbing is. Only a
// failure of the subject's own, or the last try's, fails the check.
func (m *machine) drainClaim(t *rapid.T, limit int) []Claimed {
	a := harness.Actor{Role: harness.Dispatcher}
	for try := 0; ; try++ {
		e := m.record("Claim", a, fmt.Sprintf("limit %d (drain)", limit))
		m.drainTry = try
		got, err := m.claim(t, 0, limit)
		m.drainTry = 0
		m.finish(e, err, fmt.Sprintf("claimed %d", len(got)))
		if err == nil {
			return got
		}
		if ownError(err, true) || try == len(plumbingDeadlines)-1 || m.run.shrinkOver() {
			m.failedCall(t, "drain claim", err)
		}
		if m.outcome(err) == model.Unknown {
			m.m = model.ClaimUnknown(m.m)
		}
		m.crash(a)
		m.sum.Time.CountRetry()
	}
}
