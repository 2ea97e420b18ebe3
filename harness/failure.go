package harness

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
	Property     string   // the violated property (docs/properties.md); empty for infrastructure
	Message      string   // the problem as reported
	History      *History // the failing check's steps, shrunk when rapid is done
}

// FirstFailure is when the run first failed, before any shrinking.
type FirstFailure struct {
	Check   int           // the check number, from 1
	Elapsed time.Duration // wall time from the run's start
}

// SameKind reports whether f and g are failures of one kind: the same
// property, or both panics, subject errors or infrastructure errors.
func (f Failure) SameKind(g Failure) bool {
	return f.Infrastructure == g.Infrastructure && f.Panic == g.Panic && f.SubjectError == g.SubjectError && f.Property == g.Property
}
