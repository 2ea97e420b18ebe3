package mutants

import "github.com/outboxcheck/outboxcheck/impl"

// RedriveNewEventID redrives a DEAD event by copying it under a fresh
// event_id ("re-enqueue") and deleting the original. Consumers that already
// applied the event cannot recognise the copy as a duplicate.
var RedriveNewEventID = Mutant{
	Name:  "redrive-new-event-id",
	Bug:   "redrive re-enqueues a DEAD event under a new event_id",
	Kills: "stable-id",
	Queries: func(q *impl.Queries) {
		q.Redrive = `WITH dead AS (
    DELETE FROM outbox_events WHERE id = $1 AND status = 'DEAD'
    RETURNING aggregate_id, event_type, sequence, payload, created_at
)
INSERT INTO outbox_events (id, aggregate_id, event_type, sequence, payload, status, attempts, available_at, created_at)
SELECT md5($1::text || 'redriven')::uuid, aggregate_id, event_type, sequence, payload, 'PENDING', 0, $2, created_at
FROM dead`
	},
}
