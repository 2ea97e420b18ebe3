package stepcheck

import (
	"fmt"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/harness"
)

// A violation, once found, is the run's verdict: shrinking only makes its
// story shorter. rapid replays candidates against real PostgreSQL, where
// infrastructure trouble (a restart that took too long on a loaded
// machine) can meet any of them, and it runs candidates past its shrink
// deadline (a candidate in progress, and every try of one block's
// minimisation). So, while rapid shrinks a violation:
//
//   - a candidate that meets infrastructure trouble is discarded: it
//     passes (rapid keeps the counterexample it had) and is never recorded;
//   - past the shrink deadline (rapid's -rapid.shrinktime from the first
//     candidate on), a candidate stops at its next step and passes, and a
//     new one passes at once: shrinking ends within a step of its budget;
//   - except rapid's second run of a candidate that has just failed: it
//     records that run's draws as the new counterexample (the fail file's
//     input), so a confirmation stopped part-way would leave a fail file
//     cut short, which replays nothing. A confirmation always runs whole;
//     shrinking then ends at the next candidate;
//   - the run's Failure is the last check that failed with the property
//     (record never replaces it with anything else), which is the fail
//     file's input: rapid saves the last candidate that failed so.
//
// The replays rapid makes after shrinking (to save the fail file, to print
// the failure) are held to the deadline too; where shrinking stopped early,
// Run prints the story itself. An infrastructure error as the first
// failure is never shrunk: rapid's replays of it pass at once.

// discarded is the panic with which a shrink candidate is given up.
type discarded struct{ why string }

// shrinkStarted notes the start of rapid's shrinking (its first
// candidate), from which its shrink time runs.
func (r *runner) shrinkStarted() {
	if r.sum.ShrinkRuns == 2 {
		r.shrinkBy = time.Now().Add(harness.ShrinkTime())
	}
}

// shrinkingViolation reports whether the run is replaying a violation
// (or a panic) that it found: rapid's reproduction or a candidate.
func (r *runner) shrinkingViolation() bool {
	f := r.sum.Failure
	return r.sum.ShrinkRuns > 0 && f != nil && !f.Infrastructure && !f.SubjectError
}

// shrinkOver reports whether the check running is a shrink candidate past
// the shrink deadline, or past Options.MaxShrinkRuns: it is given up at
// its next step.
func (r *runner) shrinkOver() bool {
	if !r.shrinkingViolation() || r.confirming {
		return false
	}
	if n := r.opts.MaxShrinkRuns; n > 0 && r.sum.ShrinkRuns > n {
		return true
	}
	return !r.shrinkBy.IsZero() && time.Now().After(r.shrinkBy)
}

// discard gives up the running shrink candidate: it passes.
func (r *runner) discard(why string) {
	r.sum.ShrinkDiscarded++
	if r.sum.ShrinkStopped == "" {
		r.sum.ShrinkStopped = why
	}
	r.discarding = true
	panic(discarded{why})
}

// shrinkTimeUp notes a candidate given up at the shrink deadline (or
// past MaxShrinkRuns).
func (r *runner) shrinkTimeUp() {
	if r.sum.ShrinkStopped != "" {
		return
	}
	r.sum.ShrinkStopped = "the shrink time ran out"
	if n := r.opts.MaxShrinkRuns; n > 0 && r.sum.ShrinkRuns > n {
		r.sum.ShrinkStopped = fmt.Sprintf("the budget of %d shrink replays ran out", n)
	}
}

// catchDiscard, deferred by the check, turns a discard into a pass. It
// recovers nothing else: a recovered panic loses the stack that rapid
// tells failures apart by.
func (r *runner) catchDiscard() {
	if r.discarding {
		r.discarding = false
		recover()
	}
}

// runTB is the rapid.TB that Run hands rapid: the caller's, except that
// it words rapid's "flaky test" for what happened when the runner itself
// made a replay pass: an infrastructure error that was not shrunk, or
// shrinking that stopped early.
type runTB struct {
	rapid.TB
	r *runner
}

func (tb runTB) Errorf(format string, args ...any) {
	tb.TB.Helper()
	tb.TB.Errorf("%s", tb.r.reword(fmt.Sprintf(format, args...)))
}

// reword replaces rapid's "flaky test" message with what the runner knows.
func (r *runner) reword(msg string) string {
	const flaky = "[rapid] flaky test, can not reproduce a failure"
	f := r.sum.Failure
	if !strings.HasPrefix(msg, flaky) || f == nil {
		return msg
	}
	var head string
	switch {
	case f.Infrastructure:
		head = "[rapid] infrastructure error, not shrunk: " + f.Message
	case r.sum.ShrinkStopped != "":
		head = fmt.Sprintf("[rapid] shrinking stopped early (%s): the counterexample is the last check that failed with %s", r.sum.ShrinkStopped, f.Property)
	default:
		return msg
	}
	rest := strings.TrimPrefix(msg, flaky)
	if i := strings.Index(rest, "\nTraceback ("); i >= 0 {
		if j := strings.Index(rest, "Failed test output:"); j > i {
			rest = rest[:i+1] + rest[j:]
		}
	}
	return head + rest
}

// logStopped prints the counterexample where shrinking stopped early: the
// replay in which rapid prints it may have been given up.
func (r *runner) logStopped(tb rapid.TB) {
	f := r.sum.Failure
	if f == nil || r.sum.ShrinkStopped == "" || f.History == nil || f.Infrastructure || f.SubjectError {
		return
	}
	tb.Helper()
	tb.Logf("property violated: %s: %s\ncounterexample: %s (shrinking stopped early: %s)\n%s",
		f.Property, f.Message, harness.Count(len(f.History.Entries), "steps"), r.sum.ShrinkStopped, f.History.Story())
}
