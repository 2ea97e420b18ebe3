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

// Replays is how many times Exercise replays a failing schedule.
const Replays = 3

// Exercise runs the loop contract from a test and returns its Result in
// every case. With opts.DatabaseURL empty it finds or starts PostgreSQL
// itself and removes what it made. On a failure it fails t with the
// property, the message and the story (also when rapid could not
// reproduce it: flaky), saves the schedule under
// testdata/loopcheck/<test>.json for ReplayFile, and replays it Replays
// times to say how often it comes back.
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
		n, _, err := Replay(newSubject, opts, res.Schedule, f.Property, Replays)
		again := fmt.Sprintf("the failing schedule reproduced %d of %d times", n, Replays)
		if err != nil {
			again += " (replay: " + err.Error() + ")"
		}
		t.Errorf("%s\n%s\n%s", res.Story(), saved, again)
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
	fmt.Fprintf(&b, "property violated: %s: %s\n", f.Property, f.Message)
	if r.Flaky {
		b.WriteString("flaky: the shrunk schedule, run 3 times more, did not fail again; the story below is of the last run that failed\n")
	}
	fmt.Fprintf(&b, "counterexample (%d steps, first failed at schedule %d):\n", stepsRun(f.History), r.firstCheck())
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
