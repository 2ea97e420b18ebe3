package mutants

import (
	"strings"

	"github.com/outboxcheck/outboxcheck/impl"
)

// ClaimWithoutSkipLocked copies a claim that reads its candidates without
// locking them (no FOR UPDATE SKIP LOCKED): two dispatchers polling at the
// same moment read the same due rows, and the second UPDATE, once the
// first commits, re-checks only the join and claims them again. One event,
// two live leases, two publishes. Sequential tests never see it.
var ClaimWithoutSkipLocked = Mutant{
	Name:             "claim-without-skip-locked",
	Bug:              "Claim selects candidates without FOR UPDATE SKIP LOCKED: concurrent dispatchers claim the same event",
	Kills:            "lease-exclusive",
	NeedsConcurrency: true,
	Queries: func(q *impl.Queries) {
		q.Claim = strings.Replace(q.Claim, "    FOR UPDATE SKIP LOCKED\n", "", 1)
	},
}
