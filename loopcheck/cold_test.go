package loopcheck_test

import (
	"strings"
	"testing"

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// A cold schedule commits before any relay runs: the story says so, a
// relay starts at its restart step (not "already running", as it is in a
// schedule begun warm) and the others at the drain, and a relay that
// scans its table delivers what it finds there.
func TestColdScheduleCommitsBeforeAnyRelayRuns(t *testing.T) {
	var story string
	opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Recovery: refloop.Recovery,
		OnCheck: func(h *harness.History) { story = h.Story() }}
	warm := loopcheck.Schedule{{Kind: "commit", N: 2}, {Kind: "restart", N: 0}}
	for _, s := range []loopcheck.Schedule{append(loopcheck.Schedule{{Kind: "cold"}}, warm...), warm} {
		if n, f, err := loopcheck.Replay(refloop.New, opts, s, "", 1); err != nil || n != 0 {
			t.Fatalf("the reference on %v: %d failures (%v): %+v", s, n, err, f)
		}
		restart := story[strings.Index(story, "Restart"):]
		restart = restart[:strings.Index(restart, "\n")]
		if cold := s[0].Kind == "cold"; cold != strings.Contains(story, "Cold") || cold == strings.Contains(restart, "already running") {
			t.Fatalf("cold %v, but the story says otherwise:\n%s", cold, story)
		}
	}
}
