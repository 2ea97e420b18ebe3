// Command outboxcheck checks a transactional outbox + inbox against the
// reference model under crashes, lease expiries and partitions.
//
// It is thin: flags become a call into properties (or the kill matrix),
// and the error that comes back becomes the exit code.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// Exit codes.
const (
	exitOK        = 0 // every property held (run); every mutant killed and the reference passed (mutants)
	exitViolation = 1 // a property was violated (run); the kill matrix has a survivor (mutants)
	exitUsage     = 2 // bad flags, arguments or configuration (a server's refusal no retry cures among them)
	exitInfra     = 3 // infrastructure: PostgreSQL could not start, the cluster was lost, a harness deadline
	exitSubject   = 4 // the subject could not be checked: one of its operations never succeeded
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
		return runCmd(args[1:], stdout, stderr)
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

// exitCode prints err on one line and maps it to the exit code.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var c *codedError
	if !errors.As(err, &c) {
		c = &codedError{code: exitInfra}
	}
	if !c.quiet {
		fmt.Fprintf(stderr, "outboxcheck: %s\n", oneLine(err.Error()))
	}
	return c.code
}

// codedError carries its exit code.
type codedError struct {
	code  int
	err   error
	quiet bool // already reported in full
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &codedError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// infraError is err as an infrastructure error, exit 3, which a CI job may
// retry; unless the server refused on grounds no retry cures (a
// *pgscratch.Refusal: a wrong password, a database that does not exist, no
// CREATEDB), which is the user's configuration, exit 2, the server's own
// message first.
func infraError(err error) error {
	var r *pgscratch.Refusal
	if errors.As(err, &r) {
		return &codedError{code: exitUsage, err: r}
	}
	return &codedError{code: exitInfra, err: fmt.Errorf("infrastructure error: %w", err)}
}

// oneLine folds a multi-line error (pgx lists every address it tried) into
// the one line a CI log shows.
func oneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}
