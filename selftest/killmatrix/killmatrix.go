// Package killmatrix runs every mutant of impl/mutants, and the reference
// implementation, through the harness under one budget and tabulates the
// outcome (docs/ci.md): killed or survived, by which property, how fast,
// and how short the shrunk counterexample is. The CLI's `mutants` command,
// its test and the benchmarks share it.
package killmatrix

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/impl/mutants"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// Config is one kill-matrix run.
type Config struct {
	Cluster *pgscratch.Server // where each subject gets a fresh database
	Budget  harness.Budget    // per subject; the run stops at its first failure
	// ShrinkRuns, if set, bounds each step row's shrinking by replays
	// (stepcheck.Options.MaxShrinkRuns) as well as by Budget.ShrinkTime:
	// a row's counterexample is then the same on a loaded machine.
	ShrinkRuns int
	Mutants    []mutants.Mutant // default mutants.All
	// Reference also runs the reference implementation, fault-free, under
	// faults and with concurrent steps, which must pass.
	Reference bool
	// Loop adds the loop contract's rows: the reference relay, which must
	// pass, and every refloop.Mutants, under LoopBudget.
	Loop bool
	// LoopMutants, if not nil, are the only loop mutants run (by name);
	// the loop reference row then runs only with Reference.
	LoopMutants []string
	LoopBudget  LoopBudget
	Live        io.Writer // if set, receives rapid's output as it comes
}

// Row is one subject's outcome.
type Row struct {
	Subject string   // "reference", "reference+faults" or the mutant's name
	Want    string   // the property that must fail; "" for the reference
	Also    []string // other properties the same bug breaks as truly
	Faults  bool
	// Concurrent: the subject ran with ClaimTogether and DeliverTogether (Options.Concurrent).
	Concurrent bool
	// Failure is the shrunk failure; nil when every check passed.
	Failure *harness.Failure
	Checks  int           // checks until the first failure (all checks when none)
	ToFail  time.Duration // wall time until the first failure
	Elapsed time.Duration // wall time including shrinking
	Output  string        // what rapid reported
	// Reproduced of Confirmations: how often a loop row's shrunk
	// schedule failed again (real time does not replay exactly).
	Reproduced, Confirmations int
}

// Property is the violated property, "" when none was.
func (r Row) Property() string {
	if r.Failure == nil || r.Failure.Infrastructure {
		return ""
	}
	return r.Failure.Property
}

// Steps is the shrunk counterexample's length: its actions, or for a
// loop row its schedule's steps (one step may tell many lines: a commit
// of three payments, a crash loop's every crash).
func (r Row) Steps() int {
	if r.Failure == nil || r.Failure.History == nil {
		return 0
	}
	if !strings.HasPrefix(r.Subject, "loop:") {
		return len(r.Failure.History.Entries)
	}
	n := 0
	for _, e := range r.Failure.History.Entries {
		n = max(n, e.Step)
	}
	return n
}

// Verdict says what the row means: "killed", "survived", "passed",
// "WRONG PROPERTY", "FALSE POSITIVE", "INFRASTRUCTURE", "PANICKED" or
// "SUBJECT ERROR".
func (r Row) Verdict() string {
	switch {
	case r.Failure != nil && r.Failure.Infrastructure:
		return "INFRASTRUCTURE"
	case r.Failure != nil && r.Failure.Panic:
		return "PANICKED"
	case r.Failure != nil && r.Failure.SubjectError:
		return "SUBJECT ERROR"
	case r.Want == "" && r.Failure == nil:
		return "passed"
	case r.Want == "":
		return "FALSE POSITIVE"
	case r.Failure == nil:
		return "SURVIVED"
	case r.Failure.Property != r.Want && !slices.Contains(r.Also, r.Failure.Property):
		return "WRONG PROPERTY"
	}
	return "killed"
}

// Line is the row in one line: subject, verdict, property, checks and
// time to the first failure, the shrunk length and the time in all.
func Line(r Row) string {
	s := fmt.Sprintf("%-28s %-15s %-22s checks %4d  to fail %6.2fs  shrunk to %2d steps  (%.1fs)",
		r.Subject, r.Verdict(), r.Property(), r.Checks, r.ToFail.Seconds(), r.Steps(), r.Elapsed.Seconds())
	if r.Confirmations > 0 {
		s += fmt.Sprintf("  reproduced %d of %d", r.Reproduced, r.Confirmations)
	}
	return s
}

// OK: the reference passed, or the mutant was killed by its property.
func (r Row) OK() bool { return r.Verdict() == "killed" || r.Verdict() == "passed" }

// subject is one row to run.
type subject struct {
	name       string
	want       string
	faults     bool
	concurrent bool
	new        stepcheck.NewSubject
}

func (c Config) subjects() []subject {
	var out []subject
	if c.Reference {
		out = append(out, subject{name: "reference", new: reference.New},
			subject{name: "reference+faults", faults: true, new: reference.New},
			subject{name: "reference+concurrent", concurrent: true, new: reference.New})
	}
	ms := c.Mutants
	if ms == nil {
		ms = mutants.All
	}
	for _, m := range ms {
		out = append(out, subject{name: m.Name, want: m.Kills, faults: m.NeedsFaults, concurrent: m.NeedsConcurrency, new: reference.Mutated(m)})
	}
	return out
}

// Run runs every subject in turn; each row is passed to each as it is
// done. It returns an error only when it cannot run a subject at all.
func Run(ctx context.Context, c Config, each func(Row)) ([]Row, error) {
	restore := c.Budget.Apply()
	defer restore()
	var rows []Row
	for _, s := range c.subjects() {
		if err := ctx.Err(); err != nil {
			return rows, err
		}
		row, err := c.run(ctx, s)
		if err != nil {
			return rows, fmt.Errorf("%s: %w", s.name, err)
		}
		rows = append(rows, row)
		if each != nil {
			each(row)
		}
	}
	for _, l := range c.loopRows() {
		if err := ctx.Err(); err != nil {
			return rows, err
		}
		row, err := c.runLoop(ctx, l)
		if err != nil {
			return rows, fmt.Errorf("%s: %w", l.name, err)
		}
		rows = append(rows, row)
		if each != nil {
			each(row)
		}
	}
	return rows, nil
}

func (c Config) run(ctx context.Context, s subject) (Row, error) {
	db, err := c.Cluster.NewDatabase(ctx)
	if err != nil {
		return Row{}, err
	}
	defer db.Drop(context.WithoutCancel(ctx))
	opts := stepcheck.Options{DatabaseURL: db.URL, Faults: s.faults, Concurrent: s.concurrent, MaxShrinkRuns: c.ShrinkRuns}
	if s.faults && c.Cluster.Owned() {
		opts.CrashDatabase = c.Cluster.Crash
	}
	start := time.Now()
	rec := harness.NewRecorder("outboxcheck/"+s.name, c.Live)
	sum := stepcheck.Run(rec, s.new, opts)
	row := Row{Subject: s.name, Want: s.want, Faults: s.faults, Concurrent: s.concurrent, Failure: sum.Failure,
		Checks: sum.Checks, Elapsed: time.Since(start), Output: rec.Output()}
	if rec.Failed() && row.Failure == nil {
		row.Failure = &harness.Failure{Infrastructure: true, Message: "rapid failed without a recorded failure:\n" + rec.Output()}
	}
	row.ToFail = row.Elapsed
	if sum.First != nil {
		row.Checks, row.ToFail = sum.First.Check, sum.First.Elapsed
	}
	return row, nil
}
