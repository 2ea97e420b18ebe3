package mutants

import "github.com/outboxcheck/outboxcheck/impl"

// MarkFailedNoFence records a failure by event id alone. A dispatcher whose
// lease expired while its publish timed out marks the event FAILED (or
// DEAD) although another dispatcher holds the newer claim — and may
// already have published it: a stale failure overwrites a live claim.
var MarkFailedNoFence = Mutant{
	Name:  "mark-failed-no-fence",
	Bug:   "MarkFailed without the claim_id fence: a stale failure or DEAD overwrites a newer claim",
	Kills: "fencing",
	Queries: func(q *impl.Queries) {
		q.MarkFailed = `UPDATE outbox_events
SET status = $3, available_at = $4,
    last_error = $5, claim_id = NULL, claim_expires_at = NULL
WHERE id = $1 AND status = 'PUBLISHING' AND $2::text IS NOT NULL`
	},
}
