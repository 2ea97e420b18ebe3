package refloop

import (
	"context"
	"strings"

	"github.com/outboxcheck/outboxcheck/impl"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// HeadOfLine is a loop mutant: a relay that delivers strictly in commit
// order, one event at a time, and counts a DEAD event as still at the
// head of the line. A refused event is retried with its backoff, as it
// should be, but once it is dead nothing after it is ever claimed again.
// head-of-line kills it.
func HeadOfLine(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	return Build(ctx, env, Options{Notify: true, Queries: headOfLineClaim})
}

// headOfLineClaim claims only the oldest event not PUBLISHED (DEAD ones
// included: the bug), when it is due.
func headOfLineClaim(q *impl.Queries) {
	where := `    WHERE (outbox_events.status IN ('PENDING', 'FAILED') AND outbox_events.available_at <= $1)
       OR (outbox_events.status = 'PUBLISHING' AND outbox_events.claim_expires_at <= $1)`
	head := `    WHERE ((outbox_events.status IN ('PENDING', 'FAILED') AND outbox_events.available_at <= $1)
       OR (outbox_events.status = 'PUBLISHING' AND outbox_events.claim_expires_at <= $1))
      AND outbox_events.id = (SELECT head.id FROM outbox_events AS head WHERE head.status <> 'PUBLISHED'
                              ORDER BY head.created_at, head.id LIMIT 1)`
	if !strings.Contains(q.Claim, where) {
		panic("refloop: the reference's claim query changed; HeadOfLine no longer applies")
	}
	q.Claim = strings.Replace(q.Claim, where, head, 1)
}
