package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/outboxcheck/outboxcheck/gate"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/reports"
)

// signalAt sends this process sig once when(h) holds for a check that
// ended: the CLI's own handler catches it, as it would a Ctrl-C.
func signalAt(t *testing.T, sig syscall.Signal, when func(*harness.History) bool) {
	t.Helper()
	var once sync.Once
	testHookCheck = func(h *harness.History) {
		if when(h) {
			once.Do(func() { syscall.Kill(os.Getpid(), sig) })
		}
	}
	t.Cleanup(func() { testHookCheck = nil })
}

func cliErr(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errs strings.Builder
	code = exitCode(run(args, &out, &errs), &errs)
	t.Logf("outboxcheck %s → exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errs.String())
	return code, out.String(), errs.String()
}

func lastLine(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return l[len(l)-1]
}

// SIGINT and SIGTERM stop a run cleanly: "interrupted", 130 or 143, and a
// report that says so, not an infrastructure error.
func TestInterruptStopsTheRun(t *testing.T) {
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "report")
			checks := 0
			signalAt(t, c.sig, func(*harness.History) bool { checks++; return checks == 3 })
			code, _, stderr := cliErr(t, "run", "--no-faults", "--checks", "100000", "--seed", "7", "--report-dir", dir)
			if code != c.code || lastLine(stderr) != "outboxcheck: interrupted" {
				t.Fatalf("exit %d, last line %q; want %d and \"outboxcheck: interrupted\"", code, lastLine(stderr), c.code)
			}
			rep, err := reports.Read(dir)
			if err != nil || rep.Verdict != reports.Interrupted || !rep.Interrupted || rep.Checks < 3 || rep.Checks > 4 {
				t.Fatalf("report %+v, %v", rep, err)
			}
		})
	}
}

// Ctrl-C while shrinking keeps the violation found: exit 1, the
// counterexample shrunk so far, its fail file, and replay reproduces it.
func TestInterruptWhileShrinkingKeepsTheBug(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	shrinks := 0
	signalAt(t, syscall.SIGINT, func(h *harness.History) bool {
		if h.Shrinking {
			shrinks++
		}
		return shrinks == 3
	})
	code, _, stderr := cliErr(t, "run", "--subject", "claim-no-attempts", "--no-faults", "--checks", "50", "--seed", "5",
		"--shrink-time", "60s", "--report-dir", dir)
	if code != exitViolation || !strings.Contains(lastLine(stderr), "interrupted while shrinking") {
		t.Fatalf("exit %d, last line %q", code, lastLine(stderr))
	}
	rep, err := reports.Read(dir)
	if err != nil || rep.Verdict != reports.Violation || !rep.Interrupted || rep.Failure == nil || rep.Failure.FailFile != gate.FailFileName {
		t.Fatalf("report %+v, %v", rep, err)
	}
	testHookCheck = nil
	code, out := cli(t, "replay", dir)
	if code != exitViolation || !strings.Contains(out, "reproduced: property violated: backoff") {
		t.Fatalf("replay exit %d:\n%s", code, out)
	}
}
