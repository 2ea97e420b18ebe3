package loopcheck_test

import (
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// Two relays publish one event with no fault between: LockHeld, which
// declares its publishes exclusive, passes; the variant that commits its
// locking transaction before publishing fails publish-at-most-once. A
// slow broker (acks 200 ms late, within both relays' 500 ms deadline:
// nothing ambiguous) keeps the variant's rows unlocked while it publishes
// them, so the other relay takes them too.
func TestLockReleasedEarlyIsKilledByPublishAtMostOnce(t *testing.T) {
	s := loopcheck.Schedule{{Kind: "broker-slow", For: 3 * time.Second, Delay: 200 * time.Millisecond, N: 3}, {Kind: "commit"}, {Kind: "commit"}, {Kind: "pause", For: 2 * time.Second}}
	opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Recovery: refloop.Recovery}
	n, f, err := loopcheck.Replay(refloop.LockReleasedEarly, opts, s, "publish-at-most-once", 3)
	if err != nil || n != 3 {
		t.Fatalf("killed by publish-at-most-once %d of 3 (%v): %+v", n, err, f)
	}
	t.Log(f.Message)
	if n, g, err := loopcheck.Replay(refloop.LockHeld, opts, s, "", 3); err != nil || n != 0 {
		t.Fatalf("LockHeld failed %d of 3 (%v): %+v", n, err, g)
	}
}
