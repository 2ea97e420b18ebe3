package bench

import (
	"context"
	"fmt"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// Length is the throughput of checks of one average length.
type Length struct {
	Average int // the stop coin's average (-rapid.steps)
	Throughput
}

// lengths are the average check lengths measured, each with about the
// same number of steps in all, per round.
var lengths = []struct{ avg, checks int }{{30, 70}, {300, 7}, {3000, 1}}

// checkLengths adds one round of fault-free steps/s of the reference for
// checks of about 30, 300 and 3,000 steps, seeded seed: how the cost of a
// step grows with the check (state, history, read-backs).
func (c Config) checkLengths(ctx context.Context, r *Report, seed uint64) error {
	if r.Lengths == nil {
		for _, l := range lengths {
			r.Lengths = append(r.Lengths, Length{Average: l.avg})
		}
	}
	for i, l := range lengths {
		t, err := measure(ctx, c.Cluster, false, harness.Budget{Checks: l.checks, Steps: l.avg, Seed: seed}, stepcheck.DrawSwarm)
		if err != nil {
			return fmt.Errorf("checks of %d steps: %w", l.avg, err)
		}
		r.Lengths[i].add(t)
	}
	return nil
}

// measure runs the reference under budget and returns its throughput.
func measure(ctx context.Context, c *pgscratch.Server, faults bool, b harness.Budget, draw stepcheck.Draw) (Throughput, error) {
	return measureWith(ctx, c, faults, b, draw, reference.New)
}

// measureWith is measure on the subjects newSubject builds.
func measureWith(ctx context.Context, c *pgscratch.Server, faults bool, b harness.Budget, draw stepcheck.Draw, newSubject stepcheck.NewSubject) (Throughput, error) {
	opts, drop, err := options(ctx, c, faults)
	if err != nil {
		return Throughput{}, err
	}
	defer drop()
	opts.Draw = draw
	restore := b.Apply()
	defer restore()
	var t Throughput
	opts.OnCheck = func(h *harness.History) { t.Steps += len(h.Entries) }
	sum := stepcheck.Run(harness.NewRecorder("bench/throughput", nil), newSubject, opts)
	t.Took, t.Checks, t.Time = sum.Time.Total, sum.Checks, sum.Time
	if sum.Failure != nil {
		return t, fmt.Errorf("the reference failed while measuring throughput: %s", sum.Failure.Message)
	}
	return t, nil
}
