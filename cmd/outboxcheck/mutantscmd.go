package main

import (
	"flag"
	"io"

	"github.com/outboxcheck/outboxcheck/gate"
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
		return gate.ListMutants(stdout)
	}
	budget, err := b.budget()
	if err != nil {
		return err
	}
	return gate.Matrix(gate.MatrixConfig{URL: *url, Budget: budget, Only: *only, NoReference: *noRef, NoLoop: *noLoop}, stdout, stderr)
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
