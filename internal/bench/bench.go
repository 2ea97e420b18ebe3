// Package bench measures what BENCHMARKS.md reports: how fast the harness
// kills each mutant (median and max over seeds), how fast it steps with and
// without faults, how fast a cluster is ready, and the same mutants against
// the soak baseline (internal/soak) under the same budget. Every figure is
// measured in one run, side by side.
package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/impl/mutants"
	"github.com/outboxcheck/outboxcheck/internal/pgprov"
	"github.com/outboxcheck/outboxcheck/internal/soak"
	"github.com/outboxcheck/outboxcheck/properties"
)

// Config is one benchmark run.
type Config struct {
	Cluster *pgprov.Cluster
	URL     string // how the cluster was found, to start more for ClusterReady ("" = default order)
	Seeds   int    // seeds per mutant for time to kill
	Budget  time.Duration
	Mutants []mutants.Mutant
	Log     io.Writer // progress lines
	// Loop adds the loop mutants' time to kill and the loop soak;
	// LoopOnly measures nothing else.
	Loop, LoopOnly bool
}

// Report is every figure of one run.
type Report struct {
	Started      time.Time
	Took         time.Duration
	Seeds        int
	Budget       time.Duration
	ClusterReady []time.Duration
	FaultFree    Throughput
	Faulted      Throughput
	Kills        []Kill
	LoopKills    []LoopKill
}

// Throughput is steps per second of the state machine on the reference.
type Throughput struct {
	Checks, Steps int
	Took          time.Duration
}

// Rate is steps per second.
func (t Throughput) Rate() float64 { return float64(t.Steps) / t.Took.Seconds() }

// Kill is one mutant: the harness over seeds, and the soak, each within
// the budget.
type Kill struct {
	Mutant  mutants.Mutant
	Times   []time.Duration // harness: time to first failure per seed that killed within the budget
	Checks  []int           // harness: checks to first failure, per killing seed
	Wrong   []string        // harness: properties other than the mutant's that failed first
	Soak    soak.Result
	SoakRan time.Duration
}

// Median and Max of the harness's times to kill; zero when none.
func (k Kill) Median() time.Duration { return median(k.Times) }
func (k Kill) Max() time.Duration {
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
		r.LoopKills, err = c.loopKills(ctx)
		r.Took = time.Since(r.Started)
		return r, err
	}
	if r.ClusterReady, err = clusterReady(ctx, c.URL, 5); err != nil {
		return nil, err
	}
	c.logf("cluster ready: median %v", median(r.ClusterReady))
	if r.FaultFree, err = throughput(ctx, c.Cluster, false, 100); err != nil {
		return nil, err
	}
	c.logf("fault-free: %.0f steps/s", r.FaultFree.Rate())
	if r.Faulted, err = throughput(ctx, c.Cluster, true, 40); err != nil {
		return nil, err
	}
	c.logf("faulted: %.0f steps/s", r.Faulted.Rate())
	for _, m := range c.Mutants {
		k, err := c.kill(ctx, m)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		c.logf("%-32s harness %d/%d median %v max %v; soak killed=%v in %v", m.Name, len(k.Times), c.Seeds,
			k.Median().Round(time.Millisecond), k.Max().Round(time.Millisecond), k.Soak.Killed, k.Soak.ToFail.Round(time.Millisecond))
		r.Kills = append(r.Kills, k)
	}
	if c.Loop {
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
		c, err := pgprov.Start(ctx, pgprov.Options{DatabaseURL: url})
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

func options(ctx context.Context, c *pgprov.Cluster, faults bool) (properties.Options, func(), error) {
	db, err := c.NewDatabase(ctx)
	if err != nil {
		return properties.Options{}, nil, err
	}
	opts := properties.Options{DatabaseURL: db.URL, Faults: faults}
	if faults && c.Owned() {
		opts.CrashDatabase = c.Crash
	}
	return opts, func() { db.Drop(context.WithoutCancel(ctx)) }, nil
}

func throughput(ctx context.Context, c *pgprov.Cluster, faults bool, checks int) (Throughput, error) {
	opts, drop, err := options(ctx, c, faults)
	if err != nil {
		return Throughput{}, err
	}
	defer drop()
	restore := properties.Budget{Checks: checks, Seed: 1}.Apply()
	defer restore()
	var t Throughput
	opts.OnCheck = func(h *properties.History) { t.Steps += len(h.Entries) }
	rec := properties.NewRecorder("bench/throughput", nil)
	start := time.Now()
	sum := properties.Run(rec, reference.New, opts)
	t.Took, t.Checks = time.Since(start), sum.Checks
	if sum.Failure != nil {
		return t, fmt.Errorf("the reference failed while measuring throughput: %s", sum.Failure.Message)
	}
	return t, nil
}

// kill runs the harness on m for each seed (no shrinking: the time to the
// first failure is what is measured), then the soak for the same budget.
func (c Config) kill(ctx context.Context, m mutants.Mutant) (Kill, error) {
	k := Kill{Mutant: m}
	for seed := 1; seed <= c.Seeds; seed++ {
		opts, drop, err := options(ctx, c.Cluster, m.NeedsFaults)
		if err != nil {
			return k, err
		}
		opts.Concurrent = m.NeedsConcurrency
		restore := properties.Budget{Checks: 100000, Seed: uint64(seed), ShrinkTime: time.Nanosecond}.Apply()
		opts.Deadline = time.Now().Add(c.Budget)
		sum := properties.Run(properties.NewRecorder("bench/"+m.Name, nil), reference.Mutated(m), opts)
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
