package gate

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/loopsubjects"
	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/impl/mutants"
	"github.com/outboxcheck/outboxcheck/selftest/killmatrix"
)

// ListMutants writes the mutants of both contracts, what kills each and
// its bug, as a table.
func ListMutants(stdout io.Writer) error {
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "MUTANT\tKILLED BY\tNEEDS\tBUG")
	for _, m := range mutants.All {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", m.Name, m.Kills, needs(m), m.Bug)
	}
	for _, m := range loopsubjects.Mutants {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", m.Name, m.Kills, "loop contract", m.Bug)
	}
	return w.Flush()
}

// MatrixConfig is what `outboxcheck mutants` runs.
type MatrixConfig struct {
	URL         string         // PostgreSQL server URL; "": $OUTBOXCHECK_DATABASE_URL, Docker or local binaries
	Budget      harness.Budget // Seed 0 is 1: the matrix is a benchmark, reproducible unless asked otherwise
	Only        string         // comma-separated mutant names, of either contract; "": all
	NoReference bool           // skip the reference implementation's rows
	NoLoop      bool           // skip the loop contract's rows
}

// Matrix runs the kill matrix: every mutant must fail with the property
// that names its bug, and the reference must pass. A survivor is exit 1.
func Matrix(c MatrixConfig, stdout, stderr io.Writer) error {
	budget := c.Budget
	if budget.Seed == 0 {
		budget.Seed = 1
	}
	stepOnly, loopOnly := splitOnly(c.Only)
	ms, err := MutantList(stepOnly)
	if err != nil {
		return err
	}
	if c.Only != "" && ms == nil {
		ms = []mutants.Mutant{} // loop mutants only
	}

	ses, err := openSession(c.URL, stderr, false, loopSettings(!c.NoLoop && (c.Only == "" || loopOnly != nil), loopOnly))
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
	rows, err := killmatrix.Run(ctx, killmatrix.Config{Cluster: cluster, Budget: budget, Mutants: ms, Reference: !c.NoReference,
		Loop: !c.NoLoop && (c.Only == "" || loopOnly != nil), LoopMutants: loopOnly},
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
		return &Error{Code: ExitViolation, Err: fmt.Errorf("%d of %d subjects did not come out as they must", bad, len(rows))}
	}
	fmt.Fprintf(stdout, "kill matrix: %d subjects, every mutant killed by its property, the reference passed\n", len(rows))
	return nil
}

// shrinkText says how long a failure is shrunk.
func shrinkText(d time.Duration) string {
	if d <= NoShrinking {
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
// contract's (loopsubjects.Mutants); loop is nil when --only names none.
func splitOnly(only string) (step string, loop []string) {
	if only == "" {
		return "", nil
	}
	var steps []string
	for _, name := range strings.Split(only, ",") {
		name = strings.TrimSpace(name)
		if slices.ContainsFunc(loopsubjects.Mutants, func(m refloop.Mutant) bool { return m.Name == name }) {
			loop = append(loop, name)
		} else {
			steps = append(steps, name)
		}
	}
	return strings.Join(steps, ","), loop
}

// loopSettings are the server settings the loop rows need: those of the
// loop mutants named (all of them when none is), or none when no loop
// row runs.
func loopSettings(loop bool, names []string) []string {
	if !loop {
		return nil
	}
	if names == nil {
		names = loopsubjects.Names()
	}
	return loopsubjects.Settings(names...)
}
