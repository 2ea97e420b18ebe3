package proccheck_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/internal/leakcheck"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/proccheck"
)

func TestMain(m *testing.M) { harness.NoFailFilesUnlessAsked(); pgscratch.Main(m) }

func broken(t *testing.T, mode string) proccheck.Command {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	return proccheck.Command{Argv: []string{"python3", "testdata/broken.py", mode}}
}

// A subject that breaks the protocol is the subject's error, naming the
// process and quoting the line (or its stderr), never a property and
// never infrastructure; and none of its processes outlives the run.
func TestBrokenProtocolIsTheSubjectsError(t *testing.T) {
	for _, c := range []struct {
		mode, process string
		says          []string
	}{
		{"exit-at-start", "the operator process", []string{"exited before its hello: exit status 3", "cannot connect: no such database"}},
		{"bad-hello", "the operator process", []string{"its first line is not a hello", `"Starting outbox relay v1.2 ..."`}},
		{"old-version", "the operator process", []string{"speaks outboxcheck/0, not outboxcheck/1"}},
		{"garbage-relay", "the relay process", []string{"not a publish", `"publishing event 42"`}},
		{"half-report", "the relay process", []string{"a completed report without its fields", `\"claim\": \"c-1\"`}},
		{"wrong-id", "the operator process", []string{"a reply to no request"}},
		{"unknown-field", "the operator process", []string{"not a reply of the protocol", `unknown field "effect"`}},
		{"misspelt-capability", "the operator process", []string{`the capability "dead-letter"`}},
	} {
		t.Run(c.mode, func(t *testing.T) {
			url := pgscratch.NewDatabase(t).URL
			defer leakcheck.Start(t)()
			restore := harness.Budget{Checks: 3, Seed: 1}.Apply()
			defer restore()
			rec := harness.NewRecorder(t.Name(), nil)
			res := loopcheck.Run(rec, proccheck.New(broken(t, c.mode)), loopcheck.Options{DatabaseURL: url, Recovery: proccheck.Recovery})
			f := res.Failure
			if f == nil || !f.SubjectError || f.Infrastructure || f.Property != "" || f.Operation != c.process {
				t.Fatalf("want a subject error of %s, got %+v", c.process, f)
			}
			for _, s := range c.says {
				if !strings.Contains(f.Message, s) {
					t.Errorf("the error does not say %q: %s", s, f.Message)
				}
			}
			if out, _ := exec.Command("pgrep", "-f", "testdata/broken.py "+c.mode).Output(); len(out) > 0 {
				t.Errorf("processes of the subject outlived the run: %s", out)
			}
		})
	}
}

// A subject that never says hello is ended at a deadline, and said so.
func TestSilentSubjectIsEnded(t *testing.T) {
	defer leakcheck.Start(t)()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := proccheck.New(broken(t, "silent"))(ctx, loopcheck.Env{ConnString: func(harness.Actor) string { return "" }})
	if err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("got %v after %v", err, time.Since(start))
	}
	if out, _ := exec.Command("pgrep", "-f", "testdata/broken.py silent").Output(); len(out) > 0 {
		t.Errorf("the silent subject outlived its deadline: %s", out)
	}
}

// Processes started at once from one Command each get their own role:
// none writes into the Command's arguments (a race, and a wrong role).
func TestConcurrentStartsKeepTheCommand(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	argv := make([]string, 3, 8) // room to append into, as a caller's slice may have
	copy(argv, []string{"python3", "testdata/broken.py", "echo"})
	url := pgscratch.NewDatabase(t).URL
	restore := harness.Budget{Checks: 2, Seed: 1}.Apply()
	defer restore()
	rec := harness.NewRecorder(t.Name(), nil)
	loopcheck.Run(rec, proccheck.New(proccheck.Command{Argv: argv}), loopcheck.Options{DatabaseURL: url, Dispatchers: 4})
	if strings.Join(argv, " ") != "python3 testdata/broken.py echo" || len(argv) != 3 {
		t.Errorf("the command was changed: %q", argv)
	}
	if got := argv[:4][3]; got != "" {
		t.Errorf("a role was written past the command's end: %q", got)
	}
}
