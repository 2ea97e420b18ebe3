package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// LoopRate is the reference relay through the loop contract for the
// budget, K schedules at a time: schedules run and the time they took.
type LoopRate struct {
	K         int
	Schedules int
	Took      time.Duration
	Failed    string // a failure's property, if one came (a false positive)
}

// PerMinute is schedules per minute.
func (r LoopRate) PerMinute() float64 { return float64(r.Schedules) / r.Took.Minutes() }

// loopRates measures schedules per minute one at a time and at
// DefaultParallel, in that order, from the same seed: a loop
// schedule mostly waits, so K at once should be near K times as many.
func (c Config) loopRates(ctx context.Context) ([]LoopRate, error) {
	var out []LoopRate
	for _, k := range []int{1, loopcheck.DefaultParallel()} {
		db, err := c.Cluster.NewDatabase(ctx)
		if err != nil {
			return out, err
		}
		restore := harness.Budget{Checks: 1_000_000, Seed: 1, ShrinkTime: time.Nanosecond}.Apply()
		start := time.Now()
		res := loopcheck.Run(harness.NewRecorder("bench/loop/rate", nil), refloop.New, loopcheck.Options{DatabaseURL: db.URL,
			Recovery: refloop.Recovery, Parallel: k, Deadline: start.Add(c.Budget), Confirm: 1})
		took := time.Since(start)
		restore()
		db.Drop(context.WithoutCancel(ctx))
		r := LoopRate{K: res.Parallel, Schedules: res.Checks, Took: took}
		if f := res.Failure; f != nil {
			if f.Infrastructure {
				return out, fmt.Errorf("loop rate, %d at a time: %s", res.Parallel, f.Message)
			}
			r.Failed = f.Property
		}
		c.logf("loop rate: %d at a time, %d schedules in %v: %.0f a minute", r.K, r.Schedules, took.Round(time.Second), r.PerMinute())
		out = append(out, r)
	}
	return out, nil
}
