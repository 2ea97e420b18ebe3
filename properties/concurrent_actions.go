package properties

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/model"
)

// ClaimTogether has two dispatchers claim at the same instant, each on its
// own session, lined up by a gate (gate.go) so that both are inside the
// database before either writes. Bugs that need real concurrency live here: a claim that
// reads candidates without locking them hands one event to both. The model
// accepts either order of the two claims (every linearization of the
// step); the database picks one, so a history with this action replays up
// to that choice (Options.Concurrent).
func (m *machine) ClaimTogether(t *rapid.T) {
	var up []int
	for d, crashed := range m.crashed {
		if !crashed {
			up = append(up, d)
		}
	}
	if len(up) < 2 {
		t.Skip("fewer than two dispatchers up")
	}
	ds := [2]int{up[0], up[1]}
	var limits [2]int
	for i := range limits {
		limits[i] = rapid.IntRange(1, m.opts.MaxBatch).Draw(t, "limit")
	}
	e := m.record("ClaimTogether", Actor{Role: Dispatcher, N: ds[0]},
		fmt.Sprintf("with %s, limits %d and %d", Actor{Role: Dispatcher, N: ds[1]}, limits[0], limits[1]))

	type claimResult struct {
		got []Claimed
		err error
	}
	var res [2]claimResult
	ctx, cancel := context.WithTimeout(m.ctx, m.opts.CallTimeout)
	defer cancel()
	apps := []string{appName(Actor{Role: Dispatcher, N: ds[0]}), appName(Actor{Role: Dispatcher, N: ds[1]})}
	g, err := m.closeGate(ctx)
	if err != nil {
		m.infra(t, "close gate", err)
	}
	// Start them one after the other, each queued on the gate before the
	// next starts, so ids are minted in a fixed order; then open the gate.
	var wg sync.WaitGroup
	var gateErr error
	for i := range ds {
		wg.Go(func() {
			res[i].err = m.do(func(ctx context.Context) (err error) {
				res[i].got, err = m.subj.Claim(ctx, ds[i], m.m.Now, limits[i])
				return err
			})
			slices.SortFunc(res[i].got, func(a, b Claimed) int { return strings.Compare(a.ID, b.ID) })
		})
		if gateErr == nil {
			gateErr = m.waitQueued(ctx, g, apps[:i+1])
		}
	}
	if gateErr == nil {
		gateErr = m.openGate(ctx, g)
	}
	wg.Wait()
	if gateErr != nil {
		m.infra(t, "gate", gateErr)
	}
	var parts []string
	for i, r := range res {
		if r.err != nil {
			m.settle(t, Actor{Role: Dispatcher, N: ds[i]})
		}
		var ids []string
		for _, c := range r.got {
			ids = append(ids, fmt.Sprintf("%s(claim %s, attempts %d)", c.ID, c.ClaimID, c.Attempts))
		}
		parts = append(parts, fmt.Sprintf("%s: %s", Actor{Role: Dispatcher, N: ds[i]}, result(r.err, "claimed ["+strings.Join(ids, " ")+"]")))
	}
	e.Result = strings.Join(parts, "; ")

	apply := func(order ...int) (model.State, []model.Problem) {
		s := m.m
		var ps []model.Problem
		for _, i := range order {
			switch m.outcome(res[i].err) {
			case model.Unknown:
				s = model.ClaimUnknown(s)
			case model.Done:
				var p []model.Problem
				s, p = model.Claim(s, limits[i], modelClaims(res[i].got))
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
	m.report(t, ps)
	for i, r := range res {
		if r.err == nil {
			for _, c := range r.got {
				m.hold(ds[i], c)
			}
		}
	}
}

func modelClaims(got []Claimed) []model.Claimed {
	out := make([]model.Claimed, len(got))
	for i, c := range got {
		out[i] = model.Claimed{ID: c.ID, Attempts: c.Attempts, ClaimID: c.ClaimID}
	}
	return out
}
