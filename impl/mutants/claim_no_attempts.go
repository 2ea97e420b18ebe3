package mutants

import (
	"strings"

	"github.com/outboxcheck/outboxcheck/impl"
)

// ClaimNoAttempts claims without counting the attempt. The first failure
// then waits 2^0 = 1 s instead of 2 s, and an event whose publishes die
// with the dispatcher (lease expiries, not failures) never runs out of
// attempts.
var ClaimNoAttempts = Mutant{
	Name:  "claim-no-attempts",
	Bug:   "Claim does not increment attempts: wrong backoff, and crash loops never reach DEAD",
	Kills: "backoff",
	Queries: func(q *impl.Queries) {
		q.Claim = strings.Replace(q.Claim, "attempts = event.attempts + 1", "attempts = event.attempts", 1)
	},
}
