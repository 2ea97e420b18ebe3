package refloop

import (
	"context"

	"github.com/outboxcheck/outboxcheck/impl"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// NeverDead is a loop mutant: the failure update keeps attempts and
// backoff but never writes DEAD, so MaxAttempts is never reached and a
// poison event is retried, correctly spaced, for ever. dead-letter kills
// it (backoff holds).
func NeverDead(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	return Build(ctx, env, Options{Notify: true, Queries: func(q *impl.Queries) {
		q.MarkFailed = `UPDATE outbox_events
SET status = 'FAILED', available_at = $4,
    last_error = $5, claim_id = NULL, claim_expires_at = NULL
WHERE id = $1 AND status = 'PUBLISHING' AND claim_id = $2 AND $3::text IS NOT NULL`
	}})
}
