package properties

import (
	"time"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/model"
)

// drawAdvance draws how far to move the clock: freely, or around the edges
// where behaviour changes — the lease and 2^k backoffs ±1 ms, and the next
// instant the model says something comes due ±1 ms.
func drawAdvance(t *rapid.T, s model.State) time.Duration {
	edge := rapid.SampledFrom([]time.Duration{-time.Millisecond, 0, time.Millisecond}).Draw(t, "edge")
	var base time.Duration
	switch rapid.IntRange(0, 3).Draw(t, "advance kind") {
	case 0:
		base = time.Duration(rapid.IntRange(1, 90_000).Draw(t, "ms")) * time.Millisecond
		edge = 0
	case 1:
		base = s.Policy.Lease
	case 2:
		base = s.Policy.Backoff(rapid.IntRange(0, s.Policy.BackoffCap).Draw(t, "k"))
	default:
		next, ok := s.NextAttemptAt()
		if !ok || !next.After(s.Now) {
			base = s.Policy.Lease
		} else {
			base = next.Sub(s.Now)
		}
	}
	return max(base+edge, 0)
}
