package mutants

import "github.com/outboxcheck/outboxcheck/impl"

// MarkPublishedNoFence marks PUBLISHED by event id alone: the claim_id
// fence is gone. A dispatcher that stalled past its lease (GC pause, slow
// broker) and woke up after another dispatcher re-claimed the event
// overwrites the newer claim — the classic "zombie owner" lease bug.
var MarkPublishedNoFence = Mutant{
	Name:  "mark-published-no-fence",
	Bug:   "MarkPublished without the claim_id fence: a stale claimant overwrites a newer claim",
	Kills: "fencing",
	Queries: func(q *impl.Queries) {
		q.MarkPublished = `UPDATE outbox_events
SET status = 'PUBLISHED', published_at = $3, last_error = NULL,
    claim_id = NULL, claim_expires_at = NULL
WHERE id = $1 AND status = 'PUBLISHING' AND $2::text IS NOT NULL`
	},
}
