package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/impl/mutants"
	"github.com/outboxcheck/outboxcheck/selftest/killmatrix"
)

func mutantsCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("mutants", "Runs the kill matrix: every mutant must fail with the property that names its bug,\nand the reference implementation must pass (fault-free, under faults, and with concurrent steps).", stdout)
	var b budgetFlags
	b.register(fs, 300)
	matrixBudgetUsage(fs)
	list := fs.Bool("list", false, "list the mutants and exit")
	only := fs.String("only", "", "comma-separated mutant names, of either contract (default: all)")
	noRef := fs.Bool("no-reference", false, "skip the reference implementation's rows")
	noLoop := fs.Bool("no-loop", false, "skip the loop contract's rows (the reference relay and its mutants, on real time)")
	url := fs.String("database-url", "", "PostgreSQL server URL (default: $OUTBOXCHECK_DATABASE_URL, else Docker, else local binaries)")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if *list {
		w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "MUTANT\tKILLED BY\tNEEDS\tBUG")
		for _, m := range mutants.All {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", m.Name, m.Kills, needs(m), m.Bug)
		}
		for _, m := range refloop.Mutants {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", m.Name, m.Kills, "loop contract", m.Bug)
		}
		return w.Flush()
	}
	budget, err := b.budget()
	if err != nil {
		return err
	}
	if budget.Seed == 0 {
		budget.Seed = 1 // the matrix is a benchmark: reproducible unless asked otherwise
	}
	stepOnly, loopOnly := splitOnly(*only)
	ms, err := mutantList(stepOnly)
	if err != nil {
		return err
	}
	if *only != "" && ms == nil {
		ms = []mutants.Mutant{} // loop mutants only
	}

	ses, err := openSession(*url, stderr, false)
	if err != nil {
		return err
	}
	defer ses.close()
	ctx, cluster := ses.ctx, ses.cluster
	fmt.Fprintf(stdout, "kill matrix: PostgreSQL %s (%s), seed %d, at most %d checks per subject, %s\n",
		cluster.Version, cluster.Source, budget.Seed, budget.Checks, shrinkText(budget.ShrinkTime))
	const row = "%-34s %-14s %-20s %6v %8s %5s %7s\n"
	fmt.Fprintf(stdout, row, "SUBJECT", "VERDICT", "PROPERTY", "CHECKS", "TO FAIL", "STEPS", "TOTAL")
	bad := 0
	rows, err := killmatrix.Run(ctx, killmatrix.Config{Cluster: cluster, Budget: budget, Mutants: ms, Reference: !*noRef,
		Loop: !*noLoop && (*only == "" || loopOnly != nil), LoopMutants: loopOnly},
		func(r killmatrix.Row) {
			if !r.OK() {
				bad++
			}
			toFail, steps := "-", "-"
			if r.Failure != nil {
				toFail, steps = fmt.Sprintf("%.2fs", r.ToFail.Seconds()), fmt.Sprint(r.Steps())
			}
			fmt.Fprintf(stdout, row, r.Subject, r.Verdict(), r.Property(), r.Checks, toFail, steps, fmt.Sprintf("%.1fs", r.Elapsed.Seconds()))
		})
	if err != nil {
		return infraError(err)
	}
	for _, r := range rows {
		if r.Failure != nil && r.Failure.Infrastructure {
			return infraError(fmt.Errorf("%s: %s", r.Subject, r.Failure.Message))
		}
	}
	if bad > 0 {
		return &codedError{code: exitViolation, err: fmt.Errorf("%d of %d subjects did not come out as they must", bad, len(rows))}
	}
	fmt.Fprintf(stdout, "kill matrix: %d subjects, every mutant killed by its property, the reference passed\n", len(rows))
	return nil
}

// matrixBudgetUsage rewords the shared budget flags for the kill matrix,
// whose budget is not run's: an empty seed is 1, not a drawn one (the
// matrix is a benchmark), and the checks are a cap per step-contract
// subject, which stops at its first failure; the loop contract's rows
// share the seed but keep their own budget (killmatrix.LoopBudget).
func matrixBudgetUsage(fs *flag.FlagSet) {
	fs.Lookup("seed").Usage = "rapid seed (a number), the same for every subject; empty: 1, so the matrix is reproducible"
	fs.Lookup("checks").Usage = "at most this many checks per step-contract subject (each: reset, a random sequence of actions, drain); a subject stops at its first failure, and the loop contract's rows keep their own budget"
}

// shrinkText says how long a failure is shrunk.
func shrinkText(d time.Duration) string {
	if d <= noShrinking {
		return "no shrinking"
	}
	return fmt.Sprintf("shrink %v", d)
}

// needs says what a mutant's kill runs with beyond the default steps.
func needs(m mutants.Mutant) string {
	switch {
	case m.NeedsFaults:
		return "faults"
	case m.NeedsConcurrency:
		return "concurrency"
	}
	return "-"
}

// splitOnly parts --only's names into the step contract's and the loop
// contract's (refloop.Mutants); loop is nil when --only names none.
func splitOnly(only string) (step string, loop []string) {
	if only == "" {
		return "", nil
	}
	var steps []string
	for _, name := range strings.Split(only, ",") {
		name = strings.TrimSpace(name)
		if slices.ContainsFunc(refloop.Mutants, func(m refloop.Mutant) bool { return m.Name == name }) {
			loop = append(loop, name)
		} else {
			steps = append(steps, name)
		}
	}
	return strings.Join(steps, ","), loop
}
