package mutants

import (
	"strings"

	"github.com/outboxcheck/outboxcheck/impl"
)

// ClaimIgnoresAvailableAt claims PENDING and FAILED rows whatever their
// available_at: the backoff is written but never honoured, and a failing
// broker is hammered in a tight loop.
var ClaimIgnoresAvailableAt = Mutant{
	Name:  "claim-ignores-available-at",
	Bug:   "Claim ignores available_at: failed events are retried at once, with no backoff",
	Kills: "backoff",
	Queries: func(q *impl.Queries) {
		q.Claim = strings.Replace(q.Claim, " AND outbox_events.available_at <= $1", "", 1)
	},
}
