package loopcheck_test

import (
	"strings"
	"testing"

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// An event that crashes every relay publishing it: the seed's rule (only
// a failed publish makes an event DEAD) claims it for ever (crash-loop);
// the reference, which buries a claim expired at the attempt limit, ends
// it dead, and the story says after how many crashes.
func TestCrashLoopIsKilledByCrashLoop(t *testing.T) {
	s := loopcheck.Schedule{{Kind: "commit"}, {Kind: "crash-loop"}, {Kind: "commit"}}
	story := replayKills(t, refloop.CrashLoop, loopcheck.Options{MaxAttempts: 3}, s, "crash-loop")
	if !strings.Contains(story, "its event crashed it") {
		t.Errorf("the story shows no crash:\n%s", story)
	}
	var passed string
	opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Recovery: refloop.Recovery, MaxAttempts: 3,
		OnCheck: func(h *harness.History) { passed = h.Story() }}
	if n, f, err := loopcheck.Replay(refloop.New, opts, s, "", 1); err != nil || n != 0 {
		t.Fatalf("the reference failed (%v): %+v", err, f)
	}
	if !strings.Contains(passed, "dead after 3 crashes") {
		t.Errorf("the reference's crash loop did not end dead after its 3 attempts:\n%s", passed)
	}
}

// A subject that declares it retries such an event for ever
// (CrashLooper, 0) is not judged, and the step says why.
func TestCrashLoopDeclaredNotApplicable(t *testing.T) {
	var story string
	opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Recovery: refloop.Recovery,
		OnCheck: func(h *harness.History) { story = h.Story() }}
	if n, f, err := loopcheck.Replay(refloop.LockHeld, opts, loopcheck.Schedule{{Kind: "crash-loop"}}, "", 1); err != nil || n != 0 {
		t.Fatalf("a subject that declares no crash-loop bound failed (%v): %+v", err, f)
	}
	if !strings.Contains(story, "not applicable") {
		t.Errorf("the story does not say crash-loop is not applicable:\n%s", story)
	}
}
