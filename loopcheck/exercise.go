package loopcheck

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/internal/pgprov"
	"github.com/outboxcheck/outboxcheck/properties"
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
		_, db, cleanup, err := pgprov.Scratch(ctx)
		cancel()
		if err != nil {
			t.Errorf("infrastructure error: %v", err)
			return Result{Summary: properties.Summary{Failure: &properties.Failure{Infrastructure: true, Message: err.Error()}}}
		}
		defer cleanup()
		opts.DatabaseURL = db.URL
	}
	rec := properties.NewRecorder(t.Name(), nil)
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
	steps := 0
	if f.History != nil {
		steps = len(f.History.Entries)
	}
	fmt.Fprintf(&b, "counterexample (a schedule of %d steps; %d entries in the story, first failed at schedule %d):\n", len(r.Schedule), steps, r.firstCheck())
	if f.History != nil {
		b.WriteString(f.History.Story())
	}
	return strings.TrimRight(b.String(), "\n")
}

func (r Result) firstCheck() int {
	if r.First == nil {
		return 0
	}
	return r.First.Check
}

// Coverage is one line of what the run did: schedules, steps, faults per
// kind (kinds never struck called out), kills, broker outages, publishes
// after death.
func (r Result) Coverage() string {
	s := fmt.Sprintf("%d schedules (%d steps, %d shrink runs) in %v; kills %d, broker outages %d (%v down), publishes after death %d (refused)",
		r.Checks, r.Steps, r.ShrinkRuns, r.Elapsed.Round(time.Second), r.Loop.Kills, r.Loop.Outages, r.Loop.Downtime.Round(time.Millisecond), r.Loop.Zombies)
	s += fmt.Sprintf("; graceful stops %d, held transactions %d, wedges %d (relay-isolation probes judged %d)", r.Loop.Stops, r.Loop.Holds, r.Loop.Wedges, r.Loop.Probes)
	if r.Loop.Stuck > 0 {
		s += fmt.Sprintf("; %d killed incarnations never returned from Dispatch", r.Loop.Stuck)
	}
	s += "; network: " + r.Network.String()
	var never, idle []string
	for _, k := range faults.Loop {
		if r.Network[k].Injected == 0 {
			never = append(never, string(k))
		}
	}
	for _, k := range r.Network.Idle() {
		idle = append(idle, string(k))
	}
	if len(never) > 0 {
		s += "; never drawn: " + strings.Join(never, ", ")
	}
	if len(idle) > 0 {
		s += "; injected but never struck: " + strings.Join(idle, ", ")
	}
	if len(r.Loop.Partitions) > 0 {
		var per []string
		for _, k := range slices.Sorted(maps.Keys(r.Loop.Partitions)) {
			per = append(per, fmt.Sprintf("%s %d", k, r.Loop.Partitions[k]))
		}
		s += "; per link: " + strings.Join(per, ", ")
	}
	o := r.Options.withDefaults()
	return s + fmt.Sprintf("; after healing, waits up to %v without progress, %v in all", o.Recovery, o.HardBound())
}
