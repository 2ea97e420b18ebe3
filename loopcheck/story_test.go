package loopcheck_test

import (
	"slices"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// Every schedule step is in the story under its own number, the ones
// that find nothing to do too (a kill of a dead relay, a restart of a
// live one, a redelivery before any message); a step that records
// several entries numbers them alike, and the drain's are numbered 0
// ("end"): the story's steps are the schedule's.
func TestEveryStepIsInTheStoryUnderItsNumber(t *testing.T) {
	s := append(loopcheck.Schedule{{Kind: "timezone", Zone: "UTC"}, {Kind: "redeliver"}, {Kind: "kill", N: 0}, {Kind: "kill", N: 0},
		{Kind: "restart", N: 0}, {Kind: "restart", N: 0}, {Kind: "stop", N: 1}, {Kind: "stop", N: 1}, {Kind: "restart", N: 1},
		{Kind: "commit", N: 3}, {Kind: "broker-down", For: 50 * time.Millisecond}, {Kind: "pause", For: 150 * time.Millisecond},
		{Kind: "broker-slow", For: 50 * time.Millisecond, Delay: 10 * time.Millisecond}, {Kind: "pause", For: 150 * time.Millisecond}}, outage...)
	opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, MaxAttempts: 3}
	n, f, err := loopcheck.Replay(refloop.DeleteDead, opts, s, "no-loss", 1)
	if err != nil || n != 1 {
		t.Fatalf("delete-dead killed by no-loss %d of 1 (%v): %+v", n, err, f)
	}
	var steps []int
	for _, e := range f.History.Entries {
		steps = append(steps, e.Step)
	}
	d := slices.IndexFunc(f.History.Entries, func(e harness.Entry) bool { return e.Action == "Drain" })
	if d < 0 || slices.ContainsFunc(steps[d:], func(n int) bool { return n != 0 }) {
		t.Fatalf("the drain and what follows it are numbered %v from entry %d, want 0:\n%s", steps, d, f.History.Story())
	}
	for i := range s {
		if !slices.Contains(steps, i+1) {
			t.Errorf("step %d (%s) is not in the story:\n%s", i+1, s[i], f.History.Story())
		}
	}
	if c := slices.IndexFunc(f.History.Entries, func(e harness.Entry) bool { return e.Action == "Commit" }); c < 0 || steps[c] != 10 || steps[c+2] != 10 {
		t.Errorf("the three commits of step 10 are numbered %v", steps)
	}
	// Each window's end is numbered by the step running when it came: the
	// pause after the window, or the window's own step if that was still
	// being recorded (a loaded machine took 240 ms over a 50 ms window).
	for _, end := range []struct {
		action        string
		window, pause int
	}{{"BrokerUp", 11, 12}, {"BrokerPrompt", 13, 14}} {
		if i := slices.IndexFunc(f.History.Entries, func(e harness.Entry) bool { return e.Action == end.action }); i < 0 || steps[i] < end.window || steps[i] > end.pause {
			t.Errorf("no %s in step %d or %d:\n%s", end.action, end.window, end.pause, f.History.Story())
		}
	}
	if !slices.IsSorted(steps[:d]) {
		t.Errorf("steps out of order: %v", steps)
	}
}

// A replay shows every run's story to OnCheck, a passing one too, so
// that a schedule which no longer fails can still be read.
func TestReplayShowsEveryStory(t *testing.T) {
	var stories []harness.History
	opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL,
		OnCheck: func(h *harness.History) { stories = append(stories, *h) }}
	n, _, err := loopcheck.Replay(refloop.New, opts, loopcheck.Schedule{{Kind: "commit", N: 1}}, "", 2)
	if err != nil || n != 0 {
		t.Fatalf("the reference failed %d of 2 (%v)", n, err)
	}
	if len(stories) != 2 {
		t.Fatalf("OnCheck saw %d stories of 2 runs", len(stories))
	}
	for _, h := range stories {
		if !slices.ContainsFunc(h.Entries, func(e harness.Entry) bool { return e.Action == "Commit" }) {
			t.Errorf("a passing replay's story has no commit:\n%s", h.Story())
		}
	}
}
