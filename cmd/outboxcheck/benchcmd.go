package main

import (
	"io"
	"time"

	"github.com/outboxcheck/outboxcheck/gate"
)

func benchCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", "Measures time to kill per mutant (median and max over seeds), steps/s with and without\nfaults, cluster-ready time, and the soak baseline under the same budget; writes BENCHMARKS.md.", stdout)
	seeds := fs.Int("seeds", 10, "seeds per mutant")
	budget := fs.Duration("budget", 30*time.Second, "time per mutant and seed (harness) and per mutant (soak)")
	out := fs.String("out", "BENCHMARKS.md", "where to write the report ('-' for stdout)")
	only := fs.String("only", "", "comma-separated mutant names, of either contract, for the time-to-kill rows (default: all); throughput, check lengths and the gate are measured all the same")
	noLoop := fs.Bool("no-loop", false, "skip the loop mutants' rows")
	loopOnly := fs.Bool("loop-only", false, "measure only the loop mutants' rows, and replace only their section of --out")
	url := fs.String("database-url", "", "PostgreSQL server URL (default: $OUTBOXCHECK_DATABASE_URL, else Docker, else local binaries)")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	return gate.Bench(gate.BenchConfig{URL: *url, Seeds: *seeds, Budget: *budget, Out: *out, Only: *only, NoLoop: *noLoop,
		LoopOnly: *loopOnly, GateChecks: defaultChecks, Args: args}, stdout, stderr)
}
