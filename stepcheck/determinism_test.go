package stepcheck_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// histories runs the reference for the current rapid flags and returns
// every check's story.
func histories(t *testing.T, url string) []string {
	var out []string
	stepcheck.Exercise(t, reference.New, stepcheck.Options{DatabaseURL: url,
		OnCheck: func(h *harness.History) { out = append(out, h.Story()) }})
	return out
}

// One seed, run twice, gives identical histories: every choice comes from
// rapid and time from the harness's clock.
func TestSameSeedSameHistory(t *testing.T) {
	db := pgscratch.NewDatabase(t)
	setFlag(t, "rapid.seed", "424242")
	setFlag(t, "rapid.checks", "20")
	a, b := histories(t, db.URL), histories(t, db.URL)
	if len(a) != 20 || len(b) != 20 {
		t.Fatalf("ran %d and %d checks, want 20 each", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("check %d differs between runs of one seed:\n--- first\n%s--- second\n%s", i, a[i], b[i])
		}
	}
	setFlag(t, "rapid.seed", "424243")
	if c := histories(t, db.URL); strings.Join(c, "") == strings.Join(a, "") {
		t.Fatal("another seed gave the same histories: the seed is not reaching the generator")
	}
}

// Faults keep replay exact too: gates count protocol requests, not TCP
// chunks, and swallow pgx's asynchronous cancel requests.
func TestSameSeedSameHistoryUnderFaults(t *testing.T) {
	opts := faultOptions(t)
	setFlag(t, "rapid.seed", "777")
	setFlag(t, "rapid.checks", "20")
	run := func() []string {
		var out []string
		o := opts
		o.OnCheck = func(h *harness.History) { out = append(out, h.Story()) }
		stepcheck.Exercise(t, reference.New, o)
		return out
	}
	a, b := run(), run()
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			t.Fatalf("check %d differs between runs of one seed:\n--- first\n%s--- second\n%s", i, a[i], b[i])
		}
	}
	if len(a) != len(b) {
		t.Fatalf("ran %d and %d checks", len(a), len(b))
	}
}

// Every action of the state machine runs in a default run, and the
// failure paths are reached: a green run is not green because nothing
// happened.
func TestEveryActionRuns(t *testing.T) {
	db := pgscratch.NewDatabase(t)
	counts := map[string]int{}
	stepcheck.Exercise(t, reference.New, stepcheck.Options{DatabaseURL: db.URL,
		OnCheck: func(h *harness.History) {
			for _, e := range h.Entries {
				counts[e.Action]++
				if strings.HasPrefix(e.Result, "error") {
					counts[e.Action+" failing"]++
				}
				if strings.Contains(e.Result, "changed=false") {
					counts[e.Action+" fenced"]++
				}
			}
		}})
	t.Logf("actions over the run: %v", counts)
	for _, name := range []string{"Commit", "Rollback", "Claim", "Publish", "Publish failing", "MarkPublished",
		"MarkFailed", "AdvanceClock", "CrashDispatcher", "Restart", "Deliver", "CrashConsumer", "Redrive",
		"Cleanup", "Drain", "MarkPublished fenced", "Redrive fenced"} {
		if counts[name] == 0 {
			t.Errorf("no %q in 100 checks", name)
		}
	}
}

// A check replays alone: check k of a run under faults (rapid seeds it at
// base+k(k+1)/2), run again as the first check of a run of its own, as a
// replay from a fail file runs it, gives the same history. Sessions
// carried over from the run's earlier checks must not change where its
// faults strike.
func TestCheckReplaysAloneUnderFaults(t *testing.T) {
	opts := faultOptions(t)
	const base = 4242
	run := func(seed uint64, checks int) []string {
		var out []string
		setFlag(t, "rapid.seed", fmt.Sprint(seed))
		setFlag(t, "rapid.checks", fmt.Sprint(checks))
		o := opts
		o.OnCheck = func(h *harness.History) { out = append(out, h.Story()) }
		stepcheck.Exercise(t, reference.New, o)
		return out
	}
	all := run(base, 16)
	for _, k := range []uint64{7, 11, 15} {
		alone := run(base+k*(k+1)/2, 1)
		if len(alone) != 1 || int(k) >= len(all) || alone[0] != all[k] {
			t.Fatalf("check %d differs when it runs alone:\n--- in the run\n%s--- alone\n%v", k, all[min(int(k), len(all)-1)], alone)
		}
	}
}
