package model

import "fmt"

// Liveness judges a model after the drain (every fault healed, every actor
// restarted, the clock past every lease and backoff, dispatch and delivery
// run until quiescent). Every committed event must be PUBLISHED (or cleaned
// up after it was, or deleted on success) and acknowledged by a consumer,
// or DEAD; every
// acknowledged event must have exactly one business effect.
func Liveness(s State) []Problem {
	var ps []Problem
	for _, id := range ids(s.Rows) {
		r := s.Rows[id]
		switch {
		case r.Status == Dead:
		case r.Status != Published:
			ps = append(ps, Problem{Property: NoLoss, Event: id,
				Detail: fmt.Sprintf("still %s after the drain (attempts=%d, claim=%s)", s.Sem.Name(r.Status), r.Attempts, orNone(r.ClaimID))})
		case !s.Acked[id]:
			ps = append(ps, Problem{Property: NoLoss, Event: id, Detail: "PUBLISHED but never delivered and acknowledged"})
		}
	}
	gone := "cleaned up"
	if s.Sem.DeleteOnSuccess {
		gone = "deleted"
	}
	for _, id := range ids(s.Gone) {
		if !s.Acked[id] {
			ps = append(ps, Problem{Property: NoLoss, Event: id, Detail: gone + " but never delivered and acknowledged"})
		}
	}
	for _, id := range ids(s.Acked) {
		if n := s.Effects[id]; n != 1 {
			ps = append(ps, Problem{Property: EffectExactlyOnce, Event: id,
				Detail: fmt.Sprintf("acknowledged, with %d business effects", n)})
		}
	}
	return ps
}
