package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// LoopRate is the reference relay through the loop contract, K
// schedules at a time: schedules run, the time they took and how busy
// the machine's CPUs were meanwhile.
type LoopRate struct {
	K         int
	Schedules int
	Took      time.Duration
	CPU       float64 // the machine's CPUs busy, 0..1; -1 unknown
	Failed    string  // a failure's property, if one came (a false positive)
}

// PerMinute is schedules per minute.
func (r LoopRate) PerMinute() float64 { return float64(r.Schedules) / r.Took.Minutes() }

// loopRates measures schedules per minute one at a time, at
// DefaultParallel and at twice that, on the same schedules (seed 1): the
// default gate's count (GateChecks), or, without one, as many as the
// first runs in the budget. rapid draws larger schedules as a run goes
// on, so counting what each K runs in the same time would compare
// different schedules. A loop schedule mostly waits, so K at once should
// be near K times as many, and the CPU figure says what stops it.
func (c Config) loopRates(ctx context.Context) ([]LoopRate, error) {
	var out []LoopRate
	d := loopcheck.DefaultParallel()
	for _, k := range []int{1, d, 2 * d} {
		db, err := c.Cluster.NewDatabase(ctx)
		if err != nil {
			return out, err
		}
		budget := harness.Budget{Checks: c.GateChecks, Seed: 1, ShrinkTime: time.Nanosecond}
		opts := loopcheck.Options{DatabaseURL: db.URL, Recovery: refloop.Recovery, Parallel: k, Confirm: 1}
		start := time.Now()
		switch {
		case len(out) > 0:
			budget.Checks = out[0].Schedules
		case budget.Checks == 0:
			budget.Checks = 1_000_000
			opts.Deadline = start.Add(c.Budget)
		}
		restore := budget.Apply()
		cpu := startCPU()
		res := loopcheck.Run(harness.NewRecorder("bench/loop/rate", nil), refloop.New, opts)
		took := time.Since(start)
		busy := cpu()
		restore()
		db.Drop(context.WithoutCancel(ctx))
		r := LoopRate{K: res.Parallel, Schedules: res.Checks, Took: took, CPU: busy}
		if f := res.Failure; f != nil {
			if f.Infrastructure {
				return out, fmt.Errorf("loop rate, %d at a time: %s", res.Parallel, f.Message)
			}
			r.Failed = f.Property
		}
		cpuText := "CPU unknown"
		if r.CPU >= 0 {
			cpuText = fmt.Sprintf("CPU %.0f%% busy", 100*r.CPU)
		}
		c.logf("loop rate: %d at a time, %d schedules in %v: %.0f a minute, %s", r.K, r.Schedules, took.Round(time.Second), r.PerMinute(), cpuText)
		out = append(out, r)
	}
	return out, nil
}
