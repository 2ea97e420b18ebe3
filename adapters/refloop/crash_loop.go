package refloop

import (
	"context"

	"github.com/outboxcheck/outboxcheck/impl"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// CrashLoop is a loop mutant: the seed's own rule, that only a failed
// publish makes an event DEAD. Claiming counts an attempt, but an event
// that crashes every relay publishing it never fails: its claims expire,
// and it is claimed again, past the attempt limit, for ever. crash-loop
// kills it.
func CrashLoop(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	return Build(ctx, env, Options{Notify: true, Queries: func(q *impl.Queries) { q.BuryExpired = "" }})
}
