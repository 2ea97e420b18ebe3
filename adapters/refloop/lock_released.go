package refloop

import (
	"context"
	"time"

	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// LockReleasedEarly is a loop mutant: LockHeld whose transaction that
// locked the batch (FOR UPDATE SKIP LOCKED) commits before it publishes,
// as a relay that takes "claim" and "publish" for two steps does. The
// locks end at that commit, so another relay's SKIP LOCKED finds the same
// rows and publishes them too, with no fault at all. The inbox keeps the
// effects at one, so only publish-at-most-once, which LockHeld declares,
// sees it.
func LockReleasedEarly(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	s, err := Build(ctx, env, Options{Notify: true, AckDeadline: 500 * time.Millisecond})
	if err != nil {
		return s, err
	}
	return lockHeld{Subject: s, skipLocked: true, bounded: true, idleTimeout: time.Second, takeover: 3 * time.Second, releaseEarly: true}, nil
}
