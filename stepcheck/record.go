package stepcheck

import (
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// record keeps f as the run's failure. rapid replays the shrunk
// counterexample last, so the last failure recorded is the shrunk one.
// While shrinking, only a failure of the same kind (the same property, a
// panic for a panic) replaces the one found: rapid shrinks towards it
// alone, and a found violation is never replaced by anything else.
func (r *runner) record(f harness.Failure) {
	if old := r.sum.Failure; old != nil && r.sum.ShrinkRuns > 0 && !old.SameKind(f) {
		return
	}
	if r.sum.ShrinkRuns > 1 && !r.confirming && !f.Infrastructure {
		r.confirmNext = true // rapid runs a failing candidate again, recording it
	}
	if r.sum.Failure == nil {
		r.sum.First = &harness.FirstFailure{Check: r.sum.Checks, Elapsed: time.Since(r.started)}
	}
	r.sum.Failure = &f
}

// since adds the time from start to now to kind s of the run's timing.
func (m *machine) since(s harness.Spent, start time.Time) { m.sum.Time.AddSpent(s, time.Since(start)) }
