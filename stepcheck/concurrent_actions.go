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

// ClaimTogether has two dispatchers claim at the same instant, each on its
// own session, lined up by a gate (gate.go) so that both are inside the
// database before either writes. Bugs that need real concurrency live here:
// a claim that reads candidates without locking them hands one event to
// both. The two claims need not be linearizable: with SKIP LOCKED they
// scan together, each passing over the rows the other has locked, so the
// model accepts every outcome of that (model.ClaimBeside), in which either
// order of the two is one case. The database decides, so a history with
// this action replays up to that choice (Options.Concurrent).
func (m *machine) ClaimTogether(t *rapid.T) {
	var up []int
	for d, crashed := range m.crashed {
		if !crashed {
			up = append(up, d)
		}
	}
	if len(up) < 2 {
		skip("fewer than two dispatchers up")
	}
	ds := [2]int{up[0], up[1]}
	var limits [2]int
	for i := range limits {
		limits[i] = rapid.IntRange(1, m.opts.MaxBatch).Draw(t, "limit")
	}
	e := m.record("ClaimTogether", harness.Actor{Role: harness.Dispatcher, N: ds[0]},
		fmt.Sprintf("with %s, limits %d and %d", harness.Actor{Role: harness.Dispatcher, N: ds[1]}, limits[0], limits[1]))

	var got [2][]Claimed
	calls := make([]func(context.Context) error, 2)
	for i := range calls {
		calls[i] = func(ctx context.Context) (err error) {
			got[i], err = m.subj.Claim(ctx, ds[i], m.m.Now, limits[i])
			slices.SortFunc(got[i], func(a, b Claimed) int { return strings.Compare(a.ID, b.ID) })
			return err
		}
	}
	errs := m.together(t, []harness.Actor{{Role: harness.Dispatcher, N: ds[0]}, {Role: harness.Dispatcher, N: ds[1]}}, calls)
	var parts []string
	for i := range got {
		var ids []string
		for _, c := range got[i] {
			ids = append(ids, fmt.Sprintf("%s(claim %s, attempts %d)", c.ID, c.ClaimID, c.Attempts))
		}
		parts = append(parts, fmt.Sprintf("%s: %s", harness.Actor{Role: harness.Dispatcher, N: ds[i]}, result(errs[i], "claimed ["+strings.Join(ids, " ")+"]")))
	}
	e.Result, e.Outcome = strings.Join(parts, "; "), m.worstOutcome(errs)

	apply := func(order ...int) (model.State, []model.Problem) {
		s := m.m
		var ps []model.Problem
		for _, i := range order {
			switch m.outcome(errs[i]) {
			case model.Unknown:
				s = model.ClaimUnknown(s)
			case model.Done:
				var p []model.Problem
				s, p = model.ClaimBeside(s, limits[i], modelClaims(ds[i], got[i]), m.outcome(errs[1-i]), modelClaims(ds[1-i], got[1-i]))
				ps = append(ps, p...)
			}
		}
		return s, ps
	}
	s, ps := apply(0, 1)
	if len(ps) > 0 {
		if s2, ps2 := apply(1, 0); len(ps2) == 0 {
			s, ps = s2, nil
		}
	}
	m.m = s
	for i := range errs {
		m.afterDispatcherCall(ds[i], errs[i])
	}
	m.report(t, ps)
	for i := range got {
		if errs[i] == nil {
			for _, c := range got[i] {
				m.hold(ds[i], c)
			}
		}
	}
}

func modelClaims(d int, got []Claimed) []model.Claimed {
	out := make([]model.Claimed, len(got))
	for i, c := range got {
		out[i] = model.Claimed{ID: c.ID, Attempts: c.Attempts, ClaimID: c.ClaimID, Holder: d}
	}
	return out
}
