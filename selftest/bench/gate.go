package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// Gate is one default `outboxcheck run`, in process: PostgreSQL started
// afresh, the reference under every fault, seed 1.
type Gate struct {
	Draw   stepcheck.Draw
	Checks int
	Steps  int
	Took   time.Duration // from the start of PostgreSQL to its stop
	Idle   []faults.Kind // network fault kinds never struck
	Sum    harness.Summary
}

// gate runs the gate with checks checks under draw on a cluster of its
// own, found as url says.
func gate(ctx context.Context, url string, checks int, draw stepcheck.Draw) (Gate, error) {
	g := Gate{Draw: draw}
	start := time.Now()
	c, err := pgscratch.Start(ctx, pgscratch.Options{DatabaseURL: url})
	if err != nil {
		return g, err
	}
	defer c.Close() // idempotent: closed below on the way that measures
	opts, drop, err := options(ctx, c, true)
	if err != nil {
		return g, err
	}
	opts.Draw = draw
	opts.OnCheck = func(h *harness.History) {
		if !h.Shrinking {
			g.Steps += len(h.Entries)
		}
	}
	restore := harness.Budget{Checks: checks, Seed: 1}.Apply()
	g.Sum = stepcheck.Run(harness.NewRecorder("bench/gate", nil), reference.New, opts)
	restore()
	drop()
	if cerr := c.Close(); cerr != nil {
		return g, cerr
	}
	g.Took, g.Checks = time.Since(start), g.Sum.Checks
	for _, k := range faults.All {
		if g.Sum.Network[k].Struck == 0 {
			g.Idle = append(g.Idle, k)
		}
	}
	if f := g.Sum.Failure; f != nil {
		return g, fmt.Errorf("the reference failed the gate (%v draw): %s", draw, f.Message)
	}
	return g, nil
}
