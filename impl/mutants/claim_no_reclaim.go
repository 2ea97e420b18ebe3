package mutants

import (
	"strings"

	"github.com/outboxcheck/outboxcheck/impl"
)

// ClaimNoReclaim claims only PENDING and FAILED rows: the expired-lease
// branch is gone. A dispatcher that dies holding a claim leaves its events
// in PUBLISHING forever — lost, though they committed.
var ClaimNoReclaim = Mutant{
	Name:  "claim-no-reclaim",
	Bug:   "Claim never reclaims expired leases: events of a crashed dispatcher stay PUBLISHING forever",
	Kills: "no-loss",
	Queries: func(q *impl.Queries) {
		q.Claim = strings.Replace(q.Claim,
			"\n       OR (outbox_events.status = 'PUBLISHING' AND outbox_events.claim_expires_at <= $1)", "", 1)
	},
}
