package killmatrix

import (
	"context"
	"slices"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/loopsubjects"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// LoopBudget is what a loop row may spend: schedules run on real time, so
// fewer of them than the step contract's checks. Zero fields: 60
// schedules for a passing subject, 200 for a mutant, 20 s of shrinking
// (or a mutant's own ShrinkTime, if longer: its shortest story runs
// longer than that), the
// shrunk schedule confirmed loopcheck's default 5 times; the seed is the
// step rows'. A killed mutant stops at its first failure, so
// a mutant's larger budget costs nothing when the matrix is green; it
// keeps a bug found in one schedule of 25 (batch-ack-long, at a 30 s
// deadline) from surviving by chance (1 seed in 12 at 60 schedules).
type LoopBudget struct {
	Checks     int
	ShrinkTime time.Duration
	Confirm    int
}

// loopRow is one loop-contract row to run.
type loopRow struct {
	name   string
	want   string
	also   []string
	new    loopcheck.NewSubject
	opts   loopcheck.Options
	shrink time.Duration // at least this much shrinking, if set
}

func (c Config) loopRows() []loopRow {
	if !c.Loop {
		return nil
	}
	var out []loopRow
	if c.Reference || c.LoopMutants == nil {
		for _, s := range loopsubjects.Passing {
			if s.Name != "slow-rescan" { // correct but slow: a schedule waits out its 30 s cadence
				out = append(out, loopRow{name: "loop:" + s.Name, new: s.New, opts: loopcheck.Options{Recovery: s.Recovery, JetStream: s.DedupeWindow > 0, DedupeWindow: s.DedupeWindow}})
			}
		}
	}
	for _, m := range loopsubjects.Mutants {
		if c.LoopMutants != nil && !slices.Contains(c.LoopMutants, m.Name) {
			continue
		}
		out = append(out, loopRow{name: "loop:" + m.Name, want: m.Kills, also: m.Also, new: m.New, shrink: m.ShrinkTime,
			opts: loopcheck.Options{Recovery: m.RecoveryTime(), MaxAttempts: m.MaxAttempts, JetStream: m.DedupeWindow > 0, DedupeWindow: m.DedupeWindow}})
	}
	return out
}

// runLoop runs one loop row under the loop budget, on a fresh database.
func (c Config) runLoop(ctx context.Context, l loopRow) (Row, error) {
	db, err := c.Cluster.NewDatabase(ctx)
	if err != nil {
		return Row{}, err
	}
	defer db.Drop(context.WithoutCancel(ctx))
	b := harness.Budget{Checks: c.LoopBudget.Checks, Seed: c.Budget.Seed, ShrinkTime: c.LoopBudget.ShrinkTime}
	switch {
	case b.Checks > 0:
	case l.want == "":
		b.Checks = 60
	default:
		b.Checks = 200
	}
	if b.ShrinkTime == 0 {
		b.ShrinkTime = 20 * time.Second
	}
	b.ShrinkTime = max(b.ShrinkTime, l.shrink)
	restore := b.Apply()
	defer restore()
	l.opts.DatabaseURL, l.opts.Confirm = db.URL, c.LoopBudget.Confirm
	l.opts.Parallel = loopcheck.DefaultParallel() // refloop's relays read no server-wide snapshot
	rec := harness.NewRecorder("outboxcheck/"+l.name, c.Live)
	start := time.Now()
	res := loopcheck.Run(rec, l.new, l.opts)
	row := Row{Subject: l.name, Want: l.want, Also: l.also, Faults: true, Failure: res.Failure, Checks: res.Checks,
		Elapsed: time.Since(start), Output: rec.Output(), Reproduced: res.Reproduced, Confirmations: res.Confirmations}
	if res.Failure == nil && rec.Failed() {
		row.Failure = &harness.Failure{Infrastructure: true, Message: "rapid failed without a recorded failure:\n" + rec.Output()}
	}
	row.ToFail = row.Elapsed
	if res.First != nil {
		row.Checks, row.ToFail = res.First.Check, res.First.Elapsed
	}
	return row, nil
}
