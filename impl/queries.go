package impl

// Queries is the store's SQL, one statement per operation, with positional
// parameters. DefaultQueries are the seed's runtime.sql queries; a mutant
// changes one of them.
type Queries struct {
	// Claim: $1 now, $2 batch limit, $3 claim_id, $4 claim_expires_at.
	Claim string
	// NextAttemptAt: no parameters; one nullable timestamptz.
	NextAttemptAt string
	// MarkPublished: $1 id, $2 claim_id, $3 published_at.
	MarkPublished string
	// MarkFailed: $1 id, $2 claim_id, $3 status, $4 available_at, $5 last_error.
	MarkFailed string
	// Redrive: $1 id, $2 now.
	Redrive string
	// Cleanup: $1 cutoff (published_at at or before it is past retention).
	Cleanup string
	// Stats: no parameters; pending, oldest pending created_at, failed, dead.
	Stats string
	// BuryExpired, if set, runs before each claim: $1 now, $2 max
	// attempts. The seed's queries leave it empty (only a failed publish
	// makes an event DEAD); BuryExpiredQuery is the rule that ends a
	// crash loop.
	BuryExpired string
}

// BuryExpiredQuery makes DEAD an event whose claim expired at the attempt
// limit. Claiming counts an attempt, so an event that crashes every relay
// that publishes it (it never fails: its publisher dies) reaches the limit
// through its expired claims, as a queue's receive count does, and is
// given up on rather than claimed for ever. The seed has no such rule: its
// dispatcher retries such an event for ever (a crash loop).
const BuryExpiredQuery = `UPDATE outbox_events
SET status = 'DEAD', last_error = 'claim expired at the attempt limit: the event may crash its relay',
    claim_id = NULL, claim_expires_at = NULL
WHERE status = 'PUBLISHING' AND claim_expires_at <= $1 AND attempts >= $2`

// DefaultQueries returns the seed's queries (runtime.sql) and the reference
// operator queries.
func DefaultQueries() Queries {
	return Queries{
		Claim: `WITH candidates AS (
    SELECT id
    FROM outbox_events
    WHERE (outbox_events.status IN ('PENDING', 'FAILED') AND outbox_events.available_at <= $1)
       OR (outbox_events.status = 'PUBLISHING' AND outbox_events.claim_expires_at <= $1)
    ORDER BY outbox_events.available_at, outbox_events.created_at
    FOR UPDATE SKIP LOCKED
    LIMIT $2
)
UPDATE outbox_events AS event
SET status = 'PUBLISHING',
    attempts = event.attempts + 1,
    claim_id = $3,
    claim_expires_at = $4
FROM candidates
WHERE event.id = candidates.id
RETURNING event.id, event.aggregate_id, event.event_type, event.sequence, event.payload,
          event.created_at, event.attempts, event.claim_id`,

		NextAttemptAt: `SELECT MIN(candidate.due_at)::timestamptz AS due_at
FROM (
    (SELECT available_at AS due_at
     FROM outbox_events
     WHERE status IN ('PENDING', 'FAILED')
     ORDER BY available_at
     LIMIT 1)
    UNION ALL
    (SELECT claim_expires_at AS due_at
     FROM outbox_events
     WHERE status = 'PUBLISHING' AND claim_expires_at IS NOT NULL
     ORDER BY claim_expires_at
     LIMIT 1)
) AS candidate`,

		MarkPublished: `UPDATE outbox_events
SET status = 'PUBLISHED', published_at = $3, last_error = NULL,
    claim_id = NULL, claim_expires_at = NULL
WHERE id = $1 AND status = 'PUBLISHING' AND claim_id = $2`,

		MarkFailed: `UPDATE outbox_events
SET status = $3, available_at = $4,
    last_error = $5, claim_id = NULL, claim_expires_at = NULL
WHERE id = $1 AND status = 'PUBLISHING' AND claim_id = $2`,

		Redrive: `UPDATE outbox_events
SET status = 'PENDING', attempts = 0, available_at = $2, last_error = NULL,
    claim_id = NULL, claim_expires_at = NULL
WHERE id = $1 AND status = 'DEAD'`,

		Cleanup: `DELETE FROM outbox_events WHERE status = 'PUBLISHED' AND published_at <= $1`,

		Stats: `SELECT count(*) FILTER (WHERE status IN ('PENDING', 'FAILED', 'PUBLISHING')),
       min(created_at) FILTER (WHERE status IN ('PENDING', 'FAILED', 'PUBLISHING')),
       count(*) FILTER (WHERE status = 'FAILED'),
       count(*) FILTER (WHERE status = 'DEAD')
FROM outbox_events`,
	}
}
