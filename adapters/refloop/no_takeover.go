package refloop

import (
	"context"
	"time"

	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// LockHeld is a correct relay of another design (docs/adapters.md): its claim is
// the row locks of the transaction it publishes in (FOR UPDATE SKIP
// LOCKED, no lease), each publish within a 500 ms ack deadline, and its
// sessions end by the server after 1 s idle in a transaction, so a relay
// cut off mid-publish frees its rows for the others: it declares a 3 s
// takeover.
func LockHeld(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	return lockHeldWith(ctx, env, time.Second)
}

// NoTakeover is a loop mutant: LockHeld without the idle timeout. A relay
// cut off mid-publish keeps its session, its transaction and its row
// locks until the server notices the connection is gone (hours, on a real
// network), and no other relay takes its events over. takeover kills it.
func NoTakeover(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	return lockHeldWith(ctx, env, 0)
}

func lockHeldWith(ctx context.Context, env loopcheck.Env, idle time.Duration) (loopcheck.Subject, error) {
	s, err := Build(ctx, env, Options{Notify: true, AckDeadline: 500 * time.Millisecond})
	if err != nil {
		return s, err
	}
	return lockHeld{Subject: s, skipLocked: true, bounded: true, idleTimeout: idle, takeover: 3 * time.Second}, nil
}
