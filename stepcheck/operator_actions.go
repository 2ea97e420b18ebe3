package stepcheck

import (
	"context"
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/model"
)

// Redrive has the operator put an event back from DEAD. Usually a DEAD
// one; sometimes any, to check that redrive leaves the others alone. The
// swarm draw redrives a live event only one time in five when none is
// DEAD, and otherwise draws another action: redrive's bugs need a DEAD
// event, and a check has few steps to reach one.
func (m *machine) Redrive(t *rapid.T) {
	var dead, all []string
	for id, r := range m.m.Rows {
		all = append(all, id)
		if r.Status == model.Dead {
			dead = append(dead, id)
		}
	}
	if len(all) == 0 {
		skip("no events")
	}
	if len(dead) == 0 && m.opts.Draw == DrawSwarm && rapid.IntRange(0, 4).Draw(t, "redrive a live event") != 0 {
		skip("no DEAD event")
	}
	pool := dead
	if len(pool) == 0 || rapid.IntRange(0, 4).Draw(t, "redrive any") == 0 {
		pool = all
	}
	id := rapid.SampledFrom(sorted(pool)).Draw(t, "event")
	e := m.record("Redrive", harness.Actor{Role: harness.Operator}, id)
	var changed bool
	err := m.do(harness.Actor{Role: harness.Operator}, func(ctx context.Context) (err error) { changed, err = m.subj.Redrive(ctx, id, m.m.Now); return })
	m.finish(e, err, fmt.Sprintf("changed=%v", changed))
	var ps []model.Problem
	m.m, ps = model.Redrive(m.m, id, changed, m.outcome(err))
	m.report(t, ps)
}

// Cleanup has the operator delete old PUBLISHED rows.
func (m *machine) Cleanup(t *rapid.T) {
	retention := rapid.SampledFrom([]time.Duration{0, time.Second, time.Minute, time.Hour}).Draw(t, "retention")
	e := m.record("Cleanup", harness.Actor{Role: harness.Operator}, "retention "+retention.String())
	var n int
	err := m.do(harness.Actor{Role: harness.Operator}, func(ctx context.Context) (err error) { n, err = m.subj.Cleanup(ctx, m.m.Now, retention); return })
	m.finish(e, err, fmt.Sprintf("deleted %d", n))
	var ps []model.Problem
	m.m, ps = model.Cleanup(m.m, retention, n, m.outcome(err))
	m.afterCleanup = true
	m.report(t, ps)
}
