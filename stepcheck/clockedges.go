package stepcheck

import (
	"time"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/model"
)

// drawAdvance draws how far to move the clock: freely, or around the edges
// where behaviour changes — the lease, the declared backoff's low and high
// ends and the rescue delay ±1 ms, and the next instant the model says
// something comes due ±1 ms (and exactly it, where strict edges make it
// the last instant that is not due yet).
func drawAdvance(t *rapid.T, s model.State) time.Duration {
	edge := rapid.SampledFrom([]time.Duration{time.Millisecond, 0, -time.Millisecond}).Draw(t, "edge") // shrinks to just past an edge
	var base time.Duration
	switch rapid.IntRange(0, 3).Draw(t, "advance kind") {
	case 0:
		base = time.Duration(rapid.IntRange(1, 90_000).Draw(t, "ms")) * time.Millisecond
		edge = 0
	case 1:
		base = s.Sem.Lease
		if r := s.Sem.Rescue; r != nil && !r.UseBackoff && rapid.Bool().Draw(t, "rescue delay") {
			base = r.Delay
		}
	case 2:
		kmax := s.Sem.BackoffCap // the seed's formula changes no more past its cap
		if s.Sem.Backoff != nil {
			kmax = min(s.Sem.MaxAttempts+1, 30)
		}
		lo, hi := s.Sem.BackoffRange(rapid.IntRange(0, kmax).Draw(t, "k"))
		base = lo
		if hi != lo && rapid.Bool().Draw(t, "backoff high end") {
			base = hi
		}
	default:
		next, ok := s.NextAttemptAt()
		if !ok || !next.After(s.Now) {
			base = s.Sem.Lease
		} else {
			base = next.Sub(s.Now)
		}
	}
	return max(base+edge, 0)
}
