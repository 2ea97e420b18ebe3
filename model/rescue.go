package model

import (
	"fmt"
	"time"
)

// Rescue checks and applies a rescuer's pass at s.Now (Semantics.Rescue):
// every PUBLISHING row whose lease is over is re-queued, its claim
// revoked. n is how many rows the subject said it re-queued. One that
// leaves an expired lease behind loses its event (nothing else takes it
// back); one that re-queues more revoked a live claim.
func Rescue(s State, n int, o Outcome) (State, []Problem) {
	if o == NotDone {
		return s, nil
	}
	s = s.clone()
	rule := *s.Sem.Rescue
	wait := func(int) (time.Duration, time.Duration) { return rule.Delay, rule.Delay }
	if rule.UseBackoff {
		wait = s.Sem.BackoffRange
	}
	var expired []string
	for _, id := range ids(s.Rows) {
		if s.Expired(s.Rows[id]) {
			expired = append(expired, id)
		}
	}
	for _, id := range expired {
		r := s.Rows[id]
		next := s.fail(r, rule.CountsAttempt, wait)
		if o == Unknown {
			s.Maybe[id] = []Row{r, next}
			delete(s.Rows, id)
		} else {
			s.Rows[id] = next
		}
	}
	switch {
	case o == Unknown:
	case n < len(expired):
		return s, []Problem{{Property: NoLoss, Event: expired[0],
			Detail: fmt.Sprintf("rescue re-queued %d rows, but %d leases were over (%v): a lease left over is never taken back", n, len(expired), expired)}}
	case n > len(expired):
		return s, []Problem{{Property: LeaseExclusive,
			Detail: fmt.Sprintf("rescue re-queued %d rows; only %d leases were over (%v): it revoked a live claim", n, len(expired), expired)}}
	}
	return s, nil
}
