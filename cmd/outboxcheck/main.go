// Command outboxcheck checks a transactional outbox + inbox against the
// reference model under crashes, lease expiries and partitions.
//
// It is thin: each command parses its flags and calls one function of
// package gate, and the error that comes back becomes the exit code.
package main

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/outboxcheck/outboxcheck/gate"
)

// Exit codes (gate's), by the names the tests use.
const (
	exitOK        = gate.ExitOK
	exitViolation = gate.ExitViolation
	exitUsage     = gate.ExitUsage
	exitInfra     = gate.ExitInfra
	exitSubject   = gate.ExitSubject
)

const usage = `usage: outboxcheck <command> [flags]

commands:
  run       check the reference implementation, or a mutant, with rapid
  mutants   run the kill matrix: every mutant must be killed by its property
  replay    run a report's counterexample again, step by step
  report    'report merge --out DIR DIR...': merge shard reports
  bench     measure time to kill, steps/s and the soak baseline; write BENCHMARKS.md
  clean     list and drop the databases runs left on a --database-url server

Run 'outboxcheck <command> -h' for a command's flags.

PostgreSQL: --database-url or OUTBOXCHECK_DATABASE_URL (a database is created
for the run and dropped after), else Docker through testcontainers-go, else
the local server binaries (a throwaway cluster).

exit codes:
  0  every property held
  1  a property was violated (mutants: a mutant survived or the reference failed)
  2  usage or configuration error (bad flags; a database URL that is not one,
     or that the server refuses: wrong password, no such database, no
     CREATEDB; the team's queries or schema; a report replay or merge refuses)
  3  infrastructure error (PostgreSQL could not start, the cluster was lost,
     a deadline on the harness's own plumbing)
  4  subject error: one of the subject's operations failed on every call,
     with errors of its own (the first is printed); nothing could be checked
  130, 143  interrupted by SIGINT or SIGTERM, nothing found (run: a violation
     found before the signal is kept and exits 1)
`

func main() { os.Exit(exitCode(run(os.Args[1:], os.Stdout, os.Stderr), os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) error {
	stderr = &lockedWriter{w: stderr}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageErrorf("no command given")
	}
	switch args[0] {
	case "run":
		c, help, err := parseRun(args[1:], stdout, stderr)
		if help || err != nil {
			return err
		}
		return gate.Run(c, stdout, stderr)
	case "mutants":
		return mutantsCmd(args[1:], stdout, stderr)
	case "bench":
		return benchCmd(args[1:], stdout, stderr)
	case "replay":
		return replayCmd(args[1:], stdout, stderr)
	case "report":
		return reportCmd(args[1:], stdout, stderr)
	case "clean":
		return cleanCmd(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return usageErrorf("unknown command %q (want run, mutants, replay, report, bench or clean; see outboxcheck --help)", args[0])
}

// exitCode prints err on one line, unless it was told in full already,
// and maps it to the exit code.
func exitCode(err error, stderr io.Writer) int {
	if err != nil && !gate.Quiet(err) {
		fmt.Fprintf(stderr, "outboxcheck: %s\n", gate.OneLine(err.Error()))
	}
	return gate.Code(err)
}

var usageErrorf = gate.Usagef

// lockedWriter serializes writes: the progress line, the interrupt's line
// and a command's own output share stderr from their goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Unwrap is the writer written to: the progress line asks whether it is a
// terminal.
func (l *lockedWriter) Unwrap() io.Writer { return l.w }
