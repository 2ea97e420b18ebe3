package loopcheck

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// Replays is how many times the CLI's replay runs a saved schedule, by
// default.
const Replays = 3

// Exercise runs the loop contract from a test and returns its Result in
// every case. With opts.DatabaseURL empty it finds or starts PostgreSQL
// itself and removes what it made. On a failure it fails t with the
// property, the message and the story (also when rapid could not
// reproduce it: flaky), saves the schedule under
// testdata/loopcheck/<test>.json for ReplayFile; the story says how often
// the shrunk schedule came back (Options.Confirm runs).
func Exercise(t *testing.T, newSubject NewSubject, opts Options) Result {
	t.Helper()
	if opts.DatabaseURL == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		_, db, cleanup, err := pgscratch.Scratch(ctx)
		cancel()
		if err != nil {
			t.Errorf("infrastructure error: %v", err)
			return Result{Summary: harness.Summary{Failure: &harness.Failure{Infrastructure: true, Message: err.Error()}}}
		}
		defer cleanup()
		opts.DatabaseURL = db.URL
	}
	rec := harness.NewRecorder(t.Name(), nil)
	res := Run(rec, newSubject, opts)
	t.Logf("loopcheck: %s", res.Coverage())
	f := res.Failure
	switch {
	case f == nil && rec.Failed():
		t.Error(rec.Output())
	case f != nil && f.Infrastructure:
		t.Errorf("infrastructure error: %s", f.Message)
	case f != nil:
		path := filepath.Join("testdata", "loopcheck", fileName(t.Name())+".json")
		saved := "schedule saved to " + path + " (loopcheck.ReplayFile replays it)"
		if err := WriteFile(path, File{Property: f.Property, Message: f.Message, Options: res.Options, Schedule: res.Schedule}); err != nil {
			saved = "the schedule could not be saved: " + err.Error()
		}
		t.Errorf("%s\n%s", res.Story(), saved)
	}
	return res
}

func fileName(test string) string {
	return strings.NewReplacer("/", "_", " ", "_", ":", "_").Replace(test)
}

// Story renders a failing result: the property, its message, whether it
// was flaky, and the counterexample as a numbered story. Empty on a pass.
func (r Result) Story() string {
	f := r.Failure
	if f == nil {
		return ""
	}
	if f.Infrastructure {
		return "infrastructure error: " + f.Message
	}
	var b strings.Builder
	if f.SubjectError {
		fmt.Fprintf(&b, "subject error: %s: %s\n", f.Operation, f.Message)
		if f.History != nil {
			fmt.Fprintf(&b, "where it happened (schedule %d):\n%s", r.firstCheck(), f.History.Story())
		}
		return strings.TrimRight(b.String(), "\n")
	}
	fmt.Fprintf(&b, "property violated: %s: %s\n", f.Property, f.Message)
	switch {
	case r.Flaky:
		fmt.Fprintf(&b, "flaky: the shrunk schedule, run %d times more, did not fail again; the story below is of the last run that failed\n", r.Confirmations)
	case r.Confirmations > 0:
		fmt.Fprintf(&b, "reproduced %d of %d: the shrunk schedule, run %d times more, failed again with %s %d times\n",
			r.Reproduced, r.Confirmations, r.Confirmations, f.Property, r.Reproduced)
	}
	fmt.Fprintf(&b, "counterexample (%s, first failed at schedule %d):\n", harness.Count(stepsRun(f.History), "steps"), r.firstCheck())
	if f.History != nil {
		b.WriteString(f.History.Story())
	}
	return strings.TrimRight(b.String(), "\n")
}

// stepsRun is how many schedule steps a story ran: its highest step
// number (every step records at least one entry).
func stepsRun(h *harness.History) int {
	n := 0
	if h != nil {
		for _, e := range h.Entries {
			n = max(n, e.Step)
		}
	}
	return n
}

func (r Result) firstCheck() int {
	if r.First == nil {
		return 0
	}
	return r.First.Check
}
