package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/loopsubjects"
	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// LoopKill is one loop mutant: the loop contract over seeds, and the loop
// soak, each within the budget.
type LoopKill struct {
	Mutant refloop.Mutant
	Times  []time.Duration // time to first failure per seed that killed within the budget
	Checks []int           // schedules to first failure, per killing seed
	Wrong  []string        // properties other than the mutant's that failed first
	// Soak: the first failing round of loopSoak, if one failed within the
	// budget, and the property the judge named.
	SoakKilled bool
	SoakToFail time.Duration
	SoakFound  string
	SoakRounds int
}

func (k LoopKill) Median() time.Duration { return median(k.Times) }

// loopSoak is the chaos test teams write for a relay loop today: a fixed
// rotation of relay kills, partitions and a broker outage with commits
// between, in UTC, on a prompt broker that never refuses one event for
// good; then heal, drain, and check the end state. Run over and over, it
// is what the loop contract is measured against.
var loopSoak = loopcheck.Schedule{
	{Kind: "commit", N: 3}, {Kind: "partition", Link: "dispatcher-0", Fault: "blackhole"}, {Kind: "commit", N: 3},
	{Kind: "pause", For: 300 * time.Millisecond}, {Kind: "heal", Link: "dispatcher-0"},
	{Kind: "kill", N: 1}, {Kind: "commit", N: 3}, {Kind: "restart", N: 1},
	{Kind: "broker-down", For: 300 * time.Millisecond}, {Kind: "commit", N: 3},
	{Kind: "partition", Link: "consumer-0", Fault: "reset"}, {Kind: "commit", N: 3}, {Kind: "pause", For: 300 * time.Millisecond},
}

func (c Config) loopKills(ctx context.Context) ([]LoopKill, error) {
	var out []LoopKill
	for _, m := range loopsubjects.Mutants {
		if c.LoopMutants != nil && !slices.Contains(c.LoopMutants, m.Name) {
			continue
		}
		k, err := c.loopKill(ctx, m)
		if err != nil {
			return out, fmt.Errorf("%s: %w", m.Name, err)
		}
		c.logf("loop:%-27s harness %d/%d median %v; soak %s", m.Name, len(k.Times), c.Seeds,
			k.Median().Round(time.Millisecond), soakLine(k.SoakKilled, k.SoakToFail, c.Budget))
		out = append(out, k)
	}
	return out, nil
}

func (c Config) loopKill(ctx context.Context, m refloop.Mutant) (LoopKill, error) {
	k := LoopKill{Mutant: m}
	for seed := 1; seed <= c.Seeds; seed++ {
		db, err := c.Cluster.NewDatabase(ctx)
		if err != nil {
			return k, err
		}
		stop := make(chan struct{})
		t := time.AfterFunc(c.Budget, func() { close(stop) })
		restore := harness.Budget{Checks: 100000, Seed: uint64(seed), ShrinkTime: time.Nanosecond}.Apply()
		res := loopcheck.Run(harness.NewRecorder("bench/loop/"+m.Name, nil), m.New,
			loopcheck.Options{DatabaseURL: db.URL, Recovery: m.RecoveryTime(), MaxAttempts: m.MaxAttempts, Interrupt: stop,
				JetStream: m.DedupeWindow > 0, DedupeWindow: m.DedupeWindow})
		restore()
		t.Stop()
		db.Drop(context.WithoutCancel(ctx))
		switch f := res.Failure; {
		case f == nil:
		case f.Infrastructure:
			return k, fmt.Errorf("infrastructure: %s", f.Message)
		case !m.KilledBy(f.Property):
			k.Wrong = append(k.Wrong, f.Property)
		default:
			k.Times = append(k.Times, res.First.Elapsed)
			k.Checks = append(k.Checks, res.First.Check)
		}
	}
	return k, c.soakLoop(ctx, &k)
}

// soakLoop replays loopSoak until it fails or the budget is spent.
func (c Config) soakLoop(ctx context.Context, k *LoopKill) error {
	db, err := c.Cluster.NewDatabase(ctx)
	if err != nil {
		return err
	}
	defer db.Drop(context.WithoutCancel(ctx))
	opts := loopcheck.Options{DatabaseURL: db.URL, Recovery: k.Mutant.RecoveryTime(), MaxAttempts: k.Mutant.MaxAttempts,
		JetStream: k.Mutant.DedupeWindow > 0, DedupeWindow: k.Mutant.DedupeWindow}
	start := time.Now()
	for time.Since(start) < c.Budget {
		k.SoakRounds++
		n, f, err := loopcheck.Replay(k.Mutant.New, opts, loopSoak, "", 1)
		if err != nil {
			return err
		}
		if n > 0 {
			k.SoakKilled, k.SoakToFail = true, time.Since(start)
			k.SoakFound = f.Property + ": " + firstClause(f.Message)
			return nil
		}
	}
	return nil
}

func firstClause(s string) string {
	if i := strings.Index(s, ";"); i > 0 {
		return s[:i]
	}
	return s
}
