package mutants

import "github.com/outboxcheck/outboxcheck/impl"

// FailureRolledBack copies a dispatcher that claims and records failures in
// one transaction with the publish: when the publish fails, the whole
// transaction rolls back, the claim's attempt with it. The row goes back to
// where it was before the claim; attempts never grow and DEAD is never
// reached.
var FailureRolledBack = Mutant{
	Name:  "failure-rolled-back",
	Bug:   "the failure update is rolled back together with the claim: attempts never persist, DEAD never reached",
	Kills: "backoff",
	Queries: func(q *impl.Queries) {
		q.MarkFailed = `UPDATE outbox_events
SET status = CASE WHEN attempts - 1 = 0 THEN 'PENDING' ELSE 'FAILED' END,
    attempts = attempts - 1, available_at = available_at,
    last_error = $5, claim_id = NULL, claim_expires_at = NULL
WHERE id = $1 AND status = 'PUBLISHING' AND claim_id = $2 AND $3::text IS NOT NULL AND $4::timestamptz IS NOT NULL`
	},
}
