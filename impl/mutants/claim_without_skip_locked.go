package mutants

import (
	"context"
	"time"

	"github.com/outboxcheck/outboxcheck/impl"
)

// ClaimWithoutSkipLocked copies the claim written as a plain SELECT of due
// ids followed by an UPDATE of those ids, with no FOR UPDATE SKIP LOCKED:
// two dispatchers polling at the same moment read the same due rows, and
// the second UPDATE, once the first commits, re-checks only the ids and
// claims them again. One event, two live leases, two publishes.
// Sequential tests never see it.
var ClaimWithoutSkipLocked = Mutant{
	Name:             "claim-without-skip-locked",
	Bug:              "Claim selects candidates without FOR UPDATE SKIP LOCKED, then updates them: concurrent dispatchers claim the same event",
	Kills:            "lease-exclusive",
	NeedsConcurrency: true,
	Claim:            selectThenUpdateClaim,
}

func selectThenUpdateClaim(ctx context.Context, s *impl.Store, now time.Time, lease time.Duration, limit int, claimID string) ([]impl.Claimed, error) {
	const op = "claim"
	conn, err := s.Session.Conn(ctx)
	if err != nil {
		return nil, &impl.OpError{Op: op, Err: err}
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, &impl.OpError{Op: op, Err: err}
	}
	defer tx.Rollback(ctx) // with ctx gone, pgx closes the connection and the server rolls back
	rows, err := tx.Query(ctx, `SELECT id FROM outbox_events
		WHERE (status IN ('PENDING', 'FAILED') AND available_at <= $1)
		   OR (status = 'PUBLISHING' AND claim_expires_at <= $1)
		ORDER BY available_at, created_at
		LIMIT $2`, now, limit)
	if err != nil {
		return nil, &impl.OpError{Op: op, Err: err}
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, &impl.OpError{Op: op, Err: err}
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, &impl.OpError{Op: op, Err: err}
	}
	expires := now.Add(lease)
	rows, err = tx.Query(ctx, `UPDATE outbox_events
		SET status = 'PUBLISHING', attempts = attempts + 1, claim_id = $2, claim_expires_at = $3
		WHERE id = ANY($1::uuid[])
		RETURNING id, aggregate_id, event_type, sequence, payload, created_at, attempts, claim_id`, ids, claimID, expires)
	if err != nil {
		return nil, &impl.OpError{Op: op, Err: err}
	}
	out, err := impl.CollectClaimed(rows, expires)
	if err != nil {
		return nil, &impl.OpError{Op: op, Err: err}
	}
	if err := tx.Commit(ctx); err != nil {
		// The COMMIT went out: it may have applied (FIELD-NOTES).
		return nil, &impl.OpError{Op: op, Indeterminate: true, Err: err}
	}
	return out, nil
}
