package properties

import "time"

// Failure is why a check failed, kept as data for reports and the kill
// matrix: a violated property with its counterexample, or an
// infrastructure error (never a property).
type Failure struct {
	Infrastructure bool // true: the plumbing failed, not the subject
	Panic          bool // true: the subject panicked (a broken subject, not a property)
	// SubjectError says an operation of the subject never succeeded in
	// the run, failing with errors of its own: the subject could not be
	// checked (Operation names it; History is its first failure's check,
	// up to that step).
	SubjectError bool
	Operation    string
	Property     string   // the violated property (DESIGN §7); empty for infrastructure
	Message      string   // the problem as reported
	History      *History // the failing check's steps, shrunk when rapid is done
}

// FirstFailure is when the run first failed, before any shrinking.
type FirstFailure struct {
	Check   int           // the check number, from 1
	Elapsed time.Duration // wall time from the run's start
}

// record keeps f as the run's failure. rapid replays the shrunk
// counterexample last, so the last failure recorded is the shrunk one.
// While shrinking, only a failure of the same kind (the same property, a
// panic for a panic) replaces the one found: rapid shrinks towards it
// alone, and a found violation is never replaced by anything else.
func (r *runner) record(f Failure) {
	if old := r.sum.Failure; old != nil && r.sum.ShrinkRuns > 0 && !old.sameKind(f) {
		return
	}
	if r.sum.ShrinkRuns > 1 && !r.confirming && !f.Infrastructure {
		r.confirmNext = true // rapid runs a failing candidate again, recording it
	}
	if r.sum.Failure == nil {
		r.sum.First = &FirstFailure{Check: r.sum.Checks, Elapsed: time.Since(r.started)}
	}
	r.sum.Failure = &f
}

// sameKind reports whether f and g are failures of one kind: the same
// property, or both panics, subject errors or infrastructure errors.
func (f Failure) sameKind(g Failure) bool {
	return f.Infrastructure == g.Infrastructure && f.Panic == g.Panic && f.SubjectError == g.SubjectError && f.Property == g.Property
}
