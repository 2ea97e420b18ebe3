package jobqueue

// Queries is the queue's SQL, one statement each, so that a variant (a
// bug under test) is a one-line change of one of them.
type Queries struct {
	InsertPayment, InsertJob                    string
	Fetch, Complete, Fail, Rescue, Retry, Prune string
}

// DefaultQueries is the queue's own SQL. Every edge is strict: a job is
// due once scheduled_at is past (<), a lease is over once lease_until is.
func DefaultQueries() Queries {
	return Queries{
		InsertPayment: `INSERT INTO jq_payments (id, merchant_id, amount_cents) VALUES ($1, $2, $3)`,
		InsertJob: `INSERT INTO jq_jobs (id, kind, aggregate_id, args, state, max_attempts, scheduled_at, created_at)
VALUES ($1, 'payment.succeeded', $2, $3, 'available', $4, $5, $5)`,
		Fetch: `WITH due AS (
    SELECT id FROM jq_jobs
    WHERE state IN ('available', 'retryable') AND scheduled_at < $1
    ORDER BY scheduled_at, created_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
UPDATE jq_jobs j SET state = 'running', attempt_token = $3, lease_until = $4
FROM due WHERE j.id = due.id
RETURNING j.id, j.aggregate_id, j.args::text, j.attempt, j.attempt_token, j.created_at`,
		Complete: `UPDATE jq_jobs SET state = 'completed', finalized_at = $3, attempt_token = NULL, lease_until = NULL
WHERE id = $1 AND state = 'running' AND attempt_token = $2`,
		Fail: `UPDATE jq_jobs SET attempt = attempt + 1, errors = errors || $4::text,
    state = CASE WHEN attempt + 1 >= max_attempts THEN 'discarded' ELSE 'retryable' END,
    scheduled_at = CASE WHEN attempt + 1 >= max_attempts THEN scheduled_at ELSE $3 END,
    attempt_token = NULL, lease_until = NULL
WHERE id = $1 AND state = 'running' AND attempt_token = $2`,
		Rescue: `UPDATE jq_jobs SET attempt = attempt + 1, errors = errors || 'rescued: lease over'::text,
    state = CASE WHEN attempt + 1 >= max_attempts THEN 'discarded' ELSE 'retryable' END,
    scheduled_at = CASE WHEN attempt + 1 >= max_attempts THEN scheduled_at ELSE $2 END,
    attempt_token = NULL, lease_until = NULL
WHERE state = 'running' AND lease_until < $1`,
		Retry: `UPDATE jq_jobs SET state = 'available', scheduled_at = $2, finalized_at = NULL,
    max_attempts = greatest(max_attempts, attempt + 1)
WHERE id = $1 AND state <> 'running'`,
		Prune: `DELETE FROM jq_jobs WHERE state = 'completed' AND finalized_at < $1`,
	}
}
