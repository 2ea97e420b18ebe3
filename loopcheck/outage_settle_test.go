package loopcheck

import (
	"slices"
	"testing"
	"time"
)

// TestAWindowOutageStoryEndsSettled: the relay resends what a window
// outage lost the ack of only once its claim runs out after the heal,
// and a drain that finds the event delivered judges at once; so the
// outage's canonical shape settles after it as well as before, and a
// shrunk story that has one is also confirmed with a settle at its end
// (dedupe-past-window's seed 7 ended on a poison, and came back 8 of 10).
func TestAWindowOutageStoryEndsSettled(t *testing.T) {
	outage := Step{Kind: "window-outage", For: 140 * time.Millisecond}
	sh := &shrinker{recovery: time.Second, property: "dedupe-window",
		best: Schedule{{Kind: "commit", N: 1}, {Kind: "commit", N: 1}, outage, {Kind: "poison"}}}
	settle := Step{Kind: "pause", For: time.Second, Settle: true}
	if want := (Schedule{settle, outage, settle}); !slices.ContainsFunc(sh.shapes(), func(s Schedule) bool { return slices.Equal(s, want) }) {
		t.Errorf("shapes %v lack %v", sh.shapes(), want)
	}
	want := append(slices.Clone(sh.best), settle)
	if !slices.ContainsFunc(sh.steadier(sh.best), func(s Schedule) bool { return slices.Equal(s, want) }) {
		t.Errorf("steadier %v lack %v", sh.steadier(sh.best), want)
	}
	if got := sh.settledAfterOutage(want); got != nil {
		t.Errorf("a story that ends settled: %v, want nil", got)
	}
	if got := sh.settledAfterOutage(Schedule{{Kind: "commit", N: 1}}); got != nil {
		t.Errorf("a story without an outage: %v, want nil", got)
	}
}
