package properties

import (
	"context"
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/model"
)

// maxDrainRounds bounds the drain: each round moves the clock past every
// lease and backoff, claims everything due, publishes, marks and delivers.
const maxDrainRounds = 8

// drain brings the system to rest and checks liveness: restart everyone,
// then dispatch and deliver, with the broker accepting everything, until
// nothing is due and every message is acknowledged.
func (m *machine) drain(t *rapid.T) {
	m.record("Drain", Actor{Role: Operator}, "restart all, heal, dispatch and deliver until quiet")
	m.healAll(t)
	for d := range m.held {
		m.crash(Actor{Role: Dispatcher, N: d})
		m.held[d], m.crashed[d] = nil, false
	}
	for round := 0; round < maxDrainRounds; round++ {
		m.passDeadlines()
		claimed := m.drainDispatch(t)
		delivered := m.drainDeliver(t)
		m.Check(t)
		if claimed == 0 && delivered == 0 {
			break
		}
	}
	m.report(t, model.Liveness(m.m))
}

// passDeadlines moves the clock just past every lease and backoff.
func (m *machine) passDeadlines() {
	next, ok := m.m.NextAttemptAt()
	if !ok || !next.After(m.m.Now) {
		return
	}
	dt := next.Sub(m.m.Now) + time.Millisecond
	m.record("AdvanceClock", Actor{Role: Operator}, "+"+dt.String()+" (drain)")
	m.m = model.AdvanceClock(m.m, dt)
}

// drainDispatch claims everything due with dispatcher 0 and publishes and
// marks each event. It returns how many events it claimed.
func (m *machine) drainDispatch(t *rapid.T) int {
	const batch = 1000
	e := m.record("Claim", Actor{Role: Dispatcher}, fmt.Sprintf("limit %d (drain)", batch))
	got, err := m.claim(t, 0, batch)
	m.finish(e, err, fmt.Sprintf("claimed %d", len(got)))
	if err != nil {
		m.infra(t, "drain claim", err)
	}
	m.applyClaim(t, batch, got)
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
	e := m.record("Publish", Actor{Role: Dispatcher}, h.c.ID+" (drain)")
	before := len(m.broker.Log)
	err := m.do(Actor{Role: Dispatcher}, func(ctx context.Context) error { return m.subj.Publish(ctx, 0, h.c, m.broker) })
	m.finish(e, err, "acknowledged")
	m.applyPublishes(t, before)
	m.published = h.c.ClaimID
	m.Check(t) // a subject may mark inside Publish: see it before the mark
	e = m.record("MarkPublished", Actor{Role: Dispatcher}, h.c.ID+" (drain)")
	var changed bool
	err = m.call(t, Actor{Role: Dispatcher}, func(ctx context.Context) (err error) {
		changed, err = m.subj.MarkPublished(ctx, 0, h.c, m.m.Now)
		return
	})
	m.finish(e, err, fmt.Sprintf("changed=%v", changed))
	var ps []model.Problem
	m.m, ps = model.MarkPublished(m.m, h.c.ID, h.c.ClaimID, changed, m.outcome(err))
	m.held[0] = nil
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
