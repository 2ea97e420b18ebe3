package refloop

import (
	"context"

	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// LockWait is a loop mutant of bug class (d), one partitioned relay
// blocks all: its relay locks a batch with FOR UPDATE, without SKIP
// LOCKED, and publishes inside that transaction, with no deadline on any
// call. Alone it is correct (the row locks are its claim; a kill rolls
// them back). Cut off mid-publish, its session keeps the locks, and every
// other relay's FOR UPDATE waits behind them: nothing new is delivered
// until the partition ends. relay-isolation kills it.
func LockWait(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	s, err := Build(ctx, env, Options{Notify: true})
	if err != nil {
		return s, err
	}
	return lockHeld{Subject: s}, nil
}
