package stepcheck

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/model"
)

// pickDispatcher draws a dispatcher that is up (crashed: false) or down.
// Preconditions are checked before any draw, so a skip costs rapid nothing.
func (m *machine) pickDispatcher(t *rapid.T, crashed bool) int {
	var ds []int
	for d, c := range m.crashed {
		if c == crashed {
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 {
		skip("no such dispatcher")
	}
	return rapid.SampledFrom(ds).Draw(t, "dispatcher")
}

// Claim has a dispatcher claim up to a few due events.
func (m *machine) Claim(t *rapid.T) {
	d := m.pickDispatcher(t, false)
	limit := rapid.IntRange(1, m.opts.MaxBatch).Draw(t, "limit")
	e := m.record("Claim", harness.Actor{Role: harness.Dispatcher, N: d}, fmt.Sprintf("limit %d", limit))
	got, err := m.claim(t, d, limit)
	var ids []string
	for _, c := range got {
		ids = append(ids, fmt.Sprintf("%s(claim %s, attempts %d)", c.ID, c.ClaimID, c.Attempts))
	}
	m.finish(e, err, "claimed ["+strings.Join(ids, " ")+"]")
	switch m.outcome(err) {
	case model.Unknown:
		m.m = model.ClaimUnknown(m.m)
		m.afterDispatcherCall(d, err)
		return
	case model.NotDone:
		m.afterDispatcherCall(d, err)
		return
	}
	m.applyClaim(t, d, limit, got)
	for _, c := range got {
		m.hold(d, c)
	}
}

// applyClaim checks a determinate claim result against the model.
func (m *machine) applyClaim(t *rapid.T, d, limit int, got []Claimed) {
	var ps []model.Problem
	m.m, ps = model.Claim(m.m, limit, modelClaims(d, got))
	m.report(t, ps)
}

// claim runs dispatcher d's claim and sorts what came back by event_id:
// RETURNING order is the executor's, not a contract, and the dispatchers'
// memories must not depend on it.
func (m *machine) claim(t *rapid.T, d, limit int) ([]Claimed, error) {
	var got []Claimed
	err := m.call(t, harness.Actor{Role: harness.Dispatcher, N: d}, func(ctx context.Context) (err error) { got, err = m.subj.Claim(ctx, d, m.m.Now, limit); return })
	slices.SortFunc(got, func(a, b Claimed) int { return strings.Compare(a.ID, b.ID) })
	return got, err
}

// Publish has a dispatcher publish one claimed event; rapid decides whether
// the broker accepts it.
func (m *machine) Publish(t *rapid.T) {
	d, i := m.pickHeld(t, unpublished)
	h := &m.held[d][i]
	m.drawBroker(t)
	e := m.record("Publish", harness.Actor{Role: harness.Dispatcher, N: d}, fmt.Sprintf("%s (claim %s)", h.c.ID, h.c.ClaimID))
	before := len(m.broker.Log)
	err := m.do(harness.Actor{Role: harness.Dispatcher, N: d}, func(ctx context.Context) error { return m.subj.Publish(ctx, d, h.c, m.broker) })
	m.published = h.c.ClaimID
	m.countBroker()
	m.finish(e, err, "acknowledged")
	m.applyPublishes(t, before)
	if err != nil {
		h.state, h.cause = refused, err
	} else {
		h.state = acked
	}
}

// MarkPublished has a dispatcher record an acknowledged publish.
func (m *machine) MarkPublished(t *rapid.T) {
	d, i := m.pickHeld(t, acked)
	c := m.held[d][i].c
	e := m.record("MarkPublished", harness.Actor{Role: harness.Dispatcher, N: d}, fmt.Sprintf("%s (claim %s)", c.ID, c.ClaimID))
	var changed bool
	err := m.call(t, harness.Actor{Role: harness.Dispatcher, N: d}, func(ctx context.Context) (err error) { changed, err = m.subj.MarkPublished(ctx, d, c, m.m.Now); return })
	m.finish(e, err, fmt.Sprintf("changed=%v", changed))
	m.drop(d, i)
	var ps []model.Problem
	m.m, ps = model.MarkPublished(m.m, c.ID, c.ClaimID, changed, m.outcome(err))
	m.afterDispatcherCall(d, err)
	m.report(t, ps)
}

// MarkFailed has a dispatcher record a refused publish.
func (m *machine) MarkFailed(t *rapid.T) {
	d, i := m.pickHeld(t, refused)
	c := m.held[d][i].c
	e := m.record("MarkFailed", harness.Actor{Role: harness.Dispatcher, N: d}, fmt.Sprintf("%s (claim %s, attempts %d)", c.ID, c.ClaimID, c.Attempts))
	var changed bool
	err := m.call(t, harness.Actor{Role: harness.Dispatcher, N: d}, func(ctx context.Context) (err error) {
		changed, err = m.subj.MarkFailed(ctx, d, c, m.m.Now, m.held[d][i].cause)
		return
	})
	m.finish(e, err, fmt.Sprintf("changed=%v", changed))
	m.drop(d, i)
	var ps []model.Problem
	m.m, ps = model.MarkFailed(m.m, c.ID, c.ClaimID, changed, m.outcome(err))
	m.afterDispatcherCall(d, err)
	m.report(t, ps)
}

// CrashDispatcher kills a dispatcher: its session is cut and its memory of
// claims is gone.
func (m *machine) CrashDispatcher(t *rapid.T) {
	d := m.pickDispatcher(t, false)
	m.record("CrashDispatcher", harness.Actor{Role: harness.Dispatcher, N: d}, fmt.Sprintf("forgets %d claims", len(m.held[d])))
	m.crash(harness.Actor{Role: harness.Dispatcher, N: d})
	m.held[d], m.crashed[d] = nil, true
	m.sum.Crashes.Dispatcher++
}

// RestartDispatcher brings a crashed dispatcher back with an empty memory.
func (m *machine) RestartDispatcher(t *rapid.T) {
	d := m.pickDispatcher(t, true)
	m.record("Restart", harness.Actor{Role: harness.Dispatcher, N: d}, "")
	m.crashed[d] = false
}
