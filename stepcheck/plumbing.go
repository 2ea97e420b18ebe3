package stepcheck

import (
	"context"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// The harness's own calls (reading the subject's state back, resetting it
// before a check) are plumbing: their deadline decides nothing about the
// subject, only whether the harness waits long enough on a busy machine.
// So they are generous and retried: a try that fails for a reason that is
// not the subject's own (a timeout, a lost connection, a transient server
// error, as ownError tells) is tried again on a fresh session with a
// longer deadline, and only the last try's failure counts. A loaded CI
// runner is slow, not broken. Plumbing reads or deletes only, so a try
// that failed half-way leaves nothing that the next one does not redo.
//
// The drain's calls are the subject's, judged by the model, so they are
// not retried this way; but the drain runs with every fault healed, so
// its calls get the plumbing's first deadline (see callTimeout) and its
// claim is tried again in the next round (drainDispatch).

// plumbingDeadlines are the deadlines of a plumbing call's tries (or the
// run's CallTimeout, if longer).
var plumbingDeadlines = []time.Duration{5 * time.Second, 15 * time.Second, 40 * time.Second}

// isPlumbing reports whether calls of kind s are the harness's own.
func isPlumbing(s harness.Spent) bool { return s == harness.SpentReadBacks || s == harness.SpentReset }

// plumb runs fn, a plumbing call of actor a, retrying as described above.
// While rapid shrinks, a retry that would start past the shrink deadline
// does not: the candidate is given up anyway (see shrinkDiscard).
func (m *machine) plumb(a harness.Actor, s harness.Spent, fn func(ctx context.Context) error) error {
	var err error
	for i, d := range plumbingDeadlines {
		if i > 0 {
			if m.run.shrinkOver() {
				return err
			}
			m.subj.Crash(a) // a fresh session: a timed-out one is closed anyway
			m.sum.Time.CountRetry()
		}
		if err = m.doWithin(a, s, max(d, m.opts.CallTimeout), fn); err == nil || ownError(err, true) {
			return err
		}
	}
	return err
}

// callTimeout is the deadline of a subject call now: the run's
// CallTimeout, or while draining (every fault healed, nothing to wait out)
// the plumbing's deadline for the drain's try (drainTry) if that is
// longer, so that the drain does not time out on a slow machine.
func (m *machine) callTimeout() time.Duration {
	if m.draining {
		return max(m.opts.CallTimeout, plumbingDeadlines[min(m.drainTry, len(plumbingDeadlines)-1)])
	}
	return m.opts.CallTimeout
}

// withRetries runs fn, a call on one of the harness's own sessions (its
// clock, its pg_stat_activity session), under each of plumbingDeadlines in
// turn (or floor, if longer) until it succeeds or fails for a reason of
// its own: fn must reconnect a session that a timed-out try closed.
func withRetries(parent context.Context, floor time.Duration, fn func(ctx context.Context) error) error {
	var err error
	for _, d := range plumbingDeadlines {
		ctx, cancel := context.WithTimeout(parent, max(d, floor))
		err = fn(ctx)
		cancel()
		if err == nil || ownError(err, true) || parent.Err() != nil {
			return err
		}
	}
	return err
}
