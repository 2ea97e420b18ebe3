// Package bench measures what BENCHMARKS.md reports: how fast the harness
// kills each mutant (median and max over seeds), how fast it steps with and
// without faults, how fast a cluster is ready, and the same mutants against
// the soak baseline (selftest/soak) under the same budget. Every figure is
// measured in one run, side by side.
package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/impl/mutants"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/selftest/soak"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// Config is one benchmark run.
type Config struct {
	Cluster *pgscratch.Server
	URL     string // how the cluster was found, to start more for ClusterReady ("" = default order)
	Seeds   int    // seeds per mutant for time to kill
	Budget  time.Duration
	Mutants []mutants.Mutant
	Log     io.Writer // progress lines
	// GateChecks is the default `outboxcheck run`'s checks; 0 skips the gate.
	GateChecks int
	// Loop adds the loop mutants' time to kill and the loop soak;
	// LoopOnly measures nothing else. LoopMutants names the loop mutants
	// measured; nil: all.
	Loop, LoopOnly bool
	LoopMutants    []string
}

// Report is every figure of one run.
type Report struct {
	Started      time.Time
	Took         time.Duration
	Seeds        int
	Budget       time.Duration
	ClusterReady []time.Duration
	Bare         Bare
	SameWork     Bare // the fault-free runs' own calls replayed bare (samework.go)
	FaultFree    Throughput
	Faulted      Throughput
	Lengths      []Length
	Gates        []Gate // the default draw's, then the fixed draw's
	Kills        []Kill
	LoopKills    []LoopKill
	LoopRates    []LoopRate // one at a time, then the default parallelism
}

// Throughput is steps per second of the state machine on the reference.
type Throughput struct {
	Checks, Steps int
	Took          time.Duration
	Time          *harness.Timing // where the time went
}

// Rate is steps per second.
func (t Throughput) Rate() float64 { return float64(t.Steps) / t.Took.Seconds() }

// add counts o's run into t.
func (t *Throughput) add(o Throughput) {
	t.Checks, t.Steps, t.Took = t.Checks+o.Checks, t.Steps+o.Steps, t.Took+o.Took
	if t.Time == nil {
		t.Time = &harness.Timing{}
	}
	t.Time.Add(o.Time)
}

// Kill is one mutant: the harness over seeds with the default draw and
// with the fixed one, and the soak, each within the budget.
type Kill struct {
	Mutant  mutants.Mutant
	Harness Kills // the default draw (swarm)
	Fixed   Kills // the draw before swarm testing
	Soak    soak.Result
	SoakRan time.Duration
}

// Kills is the harness's record over seeds under one draw.
type Kills struct {
	Times  []time.Duration // time to first failure per seed that killed within the budget
	Checks []int           // checks to first failure, per killing seed
	Wrong  []string        // properties other than the mutant's that failed first
}

// Median and Max of the times to kill; zero when none.
func (k Kills) Median() time.Duration { return median(k.Times) }
func (k Kills) Max() time.Duration {
	if len(k.Times) == 0 {
		return 0
	}
	return slices.Max(k.Times)
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (c Config) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, format+"\n", args...)
	}
}

// Run measures everything.
func Run(ctx context.Context, c Config) (*Report, error) {
	if c.Mutants == nil {
		c.Mutants = mutants.All
	}
	r := &Report{Started: time.Now(), Seeds: c.Seeds, Budget: c.Budget}
	var err error
	if c.LoopOnly {
		if r.LoopRates, err = c.loopRates(ctx); err == nil {
			r.LoopKills, err = c.loopKills(ctx)
		}
		r.Took = time.Since(r.Started)
		return r, err
	}
	if r.ClusterReady, err = clusterReady(ctx, c.URL, 5); err != nil {
		return nil, err
	}
	c.logf("cluster ready: median %v", median(r.ClusterReady))
	if err := c.throughputs(ctx, r); err != nil {
		return nil, err
	}
	for _, draw := range []stepcheck.Draw{stepcheck.DrawSwarm, stepcheck.DrawFixed} {
		if c.GateChecks == 0 {
			break
		}
		g, err := gate(ctx, c.URL, c.GateChecks, draw)
		if err != nil {
			return nil, err
		}
		c.logf("gate (%v draw): %d checks, %d steps in %v", draw, g.Checks, g.Steps, g.Took.Round(time.Millisecond))
		r.Gates = append(r.Gates, g)
	}
	for _, m := range c.Mutants {
		k, err := c.kill(ctx, m)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		c.logf("%-32s harness %d/%d median %v max %v; fixed draw %d/%d median %v max %v; soak %s", m.Name,
			len(k.Harness.Times), c.Seeds, k.Harness.Median().Round(time.Millisecond), k.Harness.Max().Round(time.Millisecond),
			len(k.Fixed.Times), c.Seeds, k.Fixed.Median().Round(time.Millisecond), k.Fixed.Max().Round(time.Millisecond),
			soakLine(k.Soak.Killed, k.Soak.ToFail, c.Budget))
		r.Kills = append(r.Kills, k)
	}
	if c.Loop {
		if r.LoopRates, err = c.loopRates(ctx); err != nil {
			return nil, err
		}
		if r.LoopKills, err = c.loopKills(ctx); err != nil {
			return nil, err
		}
	}
	r.Took = time.Since(r.Started)
	return r, nil
}

func clusterReady(ctx context.Context, url string, n int) ([]time.Duration, error) {
	var out []time.Duration
	for range n {
		start := time.Now()
		c, err := pgscratch.Start(ctx, pgscratch.Options{DatabaseURL: url})
		if err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
		if err := c.Close(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func options(ctx context.Context, c *pgscratch.Server, faults bool) (stepcheck.Options, func(), error) {
	db, err := c.NewDatabase(ctx)
	if err != nil {
		return stepcheck.Options{}, nil, err
	}
	opts := stepcheck.Options{DatabaseURL: db.URL, Faults: faults}
	if faults && c.Owned() {
		opts.CrashDatabase = c.Crash
	}
	return opts, func() { db.Drop(context.WithoutCancel(ctx)) }, nil
}

// rounds interleaves the throughput runs: bare SQL, fault-free and
// faulted steps, then again, so that a machine busier in one minute than
// the next weighs on all three alike (their ratios are the figures).
const rounds = 3

// throughputs measures the bare SQL rate, fault-free and faulted steps/s,
// and steps/s against check length, in rounds.
func (c Config) throughputs(ctx context.Context, r *Report) error {
	for round := range rounds {
		seed := uint64(round + 1)
		db, err := c.Cluster.NewDatabase(ctx)
		if err != nil {
			return err
		}
		bare, err := BareOps(ctx, db.URL, 700)
		db.Drop(context.WithoutCancel(ctx))
		if err != nil {
			return fmt.Errorf("bare SQL: %w", err)
		}
		r.Bare.add(bare)
		ff, same, err := sameWork(ctx, c.Cluster, harness.Budget{Checks: 40, Seed: seed})
		if err != nil {
			return err
		}
		r.FaultFree.add(ff)
		r.SameWork.add(same)
		f, err := measure(ctx, c.Cluster, true, harness.Budget{Checks: 40, Seed: seed}, stepcheck.DrawSwarm)
		if err != nil {
			return err
		}
		r.Faulted.add(f)
		if err := c.checkLengths(ctx, r, seed); err != nil {
			return err
		}
	}
	c.logf("bare SQL: %.0f ops/s; the same work bare: %.0f ops/s; fault-free: %.0f steps/s; faulted: %.0f steps/s",
		r.Bare.Rate(), r.SameWork.Rate(), r.FaultFree.Rate(), r.Faulted.Rate())
	for _, l := range r.Lengths {
		c.logf("checks of about %d steps: %.0f steps/s", l.Average, l.Rate())
	}
	return nil
}

// kill runs the harness on m for each seed under each draw (no shrinking:
// the time to the first failure is what is measured), then the soak for
// the same budget.
func (c Config) kill(ctx context.Context, m mutants.Mutant) (Kill, error) {
	k := Kill{Mutant: m}
	var err error
	if k.Harness, err = c.kills(ctx, m, stepcheck.DrawSwarm); err != nil {
		return k, err
	}
	if k.Fixed, err = c.kills(ctx, m, stepcheck.DrawFixed); err != nil {
		return k, err
	}
	opts, drop, err := options(ctx, c.Cluster, true)
	if err != nil {
		return k, err
	}
	defer drop()
	start := time.Now()
	k.Soak, err = soak.Run(ctx, reference.Mutated(m), soak.Config{DatabaseURL: opts.DatabaseURL, Budget: c.Budget, Faults: true})
	k.SoakRan = time.Since(start)
	return k, err
}

// kills runs the harness on m for each seed under draw.
func (c Config) kills(ctx context.Context, m mutants.Mutant, draw stepcheck.Draw) (Kills, error) {
	var k Kills
	for seed := 1; seed <= c.Seeds; seed++ {
		opts, drop, err := options(ctx, c.Cluster, m.NeedsFaults)
		if err != nil {
			return k, err
		}
		opts.Concurrent, opts.Draw = m.NeedsConcurrency, draw
		restore := harness.Budget{Checks: 100000, Seed: uint64(seed), ShrinkTime: time.Nanosecond}.Apply()
		opts.Deadline = time.Now().Add(c.Budget)
		sum := stepcheck.Run(harness.NewRecorder("bench/"+m.Name, nil), reference.Mutated(m), opts)
		restore()
		drop()
		switch f := sum.Failure; {
		case f == nil:
		case f.Infrastructure:
			return k, fmt.Errorf("infrastructure: %s", f.Message)
		case f.Property != m.Kills:
			k.Wrong = append(k.Wrong, f.Property)
		default:
			k.Times = append(k.Times, sum.First.Elapsed)
			k.Checks = append(k.Checks, sum.First.Check)
		}
	}
	return k, nil
}

// soakLine is a soak's outcome for the progress log: when it killed, or
// that it survived its whole budget.
func soakLine(killed bool, toFail, budget time.Duration) string {
	if killed {
		return "killed in " + toFail.Round(time.Millisecond).String()
	}
	return "survived " + budget.String()
}
