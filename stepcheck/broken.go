package stepcheck

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
	"pgregory.net/rapid"
)

// brokenSubject is the subject's failure when one of its operations never
// succeeded in the run, every call failing, with errors of the subject's
// own (ownError) as often as e asks, while the harness itself still
// reaches the database (so the errors are not a dying server's); ok is
// false otherwise. Such a subject could not be checked: its first error
// says why. An operation that fails only some of its calls (under
// faults, say) is not broken.
func (r *runner) brokenSubject(e evidence) (f harness.Failure, ok bool) {
	ops := r.calls.broken(e)
	if len(ops) == 0 || !r.harnessAlive() {
		return harness.Failure{}, false
	}
	return r.calls.failure(ops), true
}

// harnessAlive reports whether the harness's own session reaches the
// database, reconnecting it once if needed.
func (r *runner) harnessAlive() bool {
	ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
	defer cancel()
	if c := r.harness.conn; c != nil {
		if _, err := c.Exec(ctx, "SELECT 1"); err == nil {
			return true
		}
	}
	if err := r.harness.reconnect(ctx); err != nil {
		return false
	}
	_, err := r.harness.conn.Exec(ctx, "SELECT 1")
	return err == nil
}

// judgeSubject fails the check as the subject's failure if the subject is
// broken (brokenSubject, on evidence e); otherwise it returns. While
// rapid shrinks another failure it returns at once: that failure stays
// the run's.
func (m *machine) judgeSubject(t *rapid.T, e evidence) {
	if f := m.run.sum.Failure; f != nil && !f.SubjectError {
		return
	}
	f, ok := m.run.brokenSubject(e)
	if !ok {
		return
	}
	m.logf("subject error: %s", f.Message)
	m.run.record(f)
	t.Fatalf("subject error: %s never succeeded", f.Operation)
}

// failedCall fails the check on err, from a call of the subject's that
// the harness cannot do without (reset, a read-back, the drain's claim):
// as the subject's failure if it is broken, else as an infrastructure
// error.
func (m *machine) failedCall(t *rapid.T, what string, err error) {
	m.judgeSubject(t, brokenInsteadOfInfra)
	m.infra(t, what, err)
}

// The evidence it takes to call an operation that never succeeded broken.
// A subject may refuse some calls for its own good reasons (a stale
// claim, say) while faults fail the others: an operation called only a
// few times may then never have succeeded by chance. To stand in for an
// infrastructure error, one failure of its own does (the run has failed
// anyway); for a property violated, three, and no fewer than the failures
// something else explains; to fail a run that passed, ten.
var (
	brokenInsteadOfInfra     = evidence{Own: 1}
	brokenInsteadOfViolation = evidence{Own: 3, PerOther: 1}
	brokenInsteadOfPass      = evidence{Own: 10}
)

// judgeAtEnd makes a run that passed, or stopped on an infrastructure
// error, the subject's failure if the subject is broken: a subject that
// never once did one of its operations has not passed. No check failed,
// so there is nothing for rapid to replay: the failure's story is the
// check where the operation first failed.
func (r *runner) judgeAtEnd(tb rapid.TB) {
	f := r.sum.Failure
	if r.sum.Interrupted || (f != nil && !f.Infrastructure) {
		return
	}
	e := brokenInsteadOfInfra
	if f == nil {
		e = brokenInsteadOfPass
	}
	broken, ok := r.brokenSubject(e)
	if !ok {
		return
	}
	r.sum.Failure = &broken
	tb.Errorf("subject error: %s", broken.Message)
}

// buildError is the error NewSubject returned.
type buildError struct{ err error }

func (e *buildError) Error() string { return e.err.Error() }
func (e *buildError) Unwrap() error { return e.err }

// unbuilt is the subject's failure when open failed because NewSubject
// returned an error of the subject's own (ownError) while the harness
// reaches the database: the subject could not even be built.
func (r *runner) unbuilt(err error) (harness.Failure, bool) {
	var be *buildError
	if !errors.As(err, &be) || !ownError(be.err, r.opts.Faults) || r.harness == nil || !r.harnessAlive() {
		return harness.Failure{}, false
	}
	return harness.Failure{SubjectError: true, Operation: "NewSubject", Message: fmt.Sprintf("NewSubject failed: %v", be.err)}, true
}
