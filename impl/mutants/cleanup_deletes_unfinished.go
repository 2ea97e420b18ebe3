package mutants

import "github.com/outboxcheck/outboxcheck/impl"

// CleanupDeletesUnfinished purges by age alone: every row created before
// the cutoff goes, published or not. An outage longer than the retention
// period silently deletes the events it held up.
var CleanupDeletesUnfinished = Mutant{
	Name:  "cleanup-deletes-unfinished",
	Bug:   "cleanup deletes rows by age, including PENDING, FAILED, PUBLISHING and DEAD ones",
	Kills: "retention-safe",
	Queries: func(q *impl.Queries) {
		q.Cleanup = `DELETE FROM outbox_events WHERE created_at <= $1`
	},
}
