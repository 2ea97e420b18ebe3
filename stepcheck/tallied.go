package stepcheck

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/outboxcheck/outboxcheck/harness"
)

// tallied is the subject as the harness calls it: every call is counted
// in the run's calls, with whether its error is the subject's own doing
// (brokenSubject judges the counts).
type tallied struct {
	Subject
	r *runner
}

var operator = harness.Actor{Role: harness.Operator}

// count counts a call of op by actor a that returned err; induced says
// the harness made it fail on purpose (a refused publish, a consumer's
// crash at its failpoint).
//
// An error is the subject's own if ownError says so and, unless the
// server itself refused the call (no fault makes a division by zero),
// no fault was on the actor's link.
func (s tallied) count(op string, a harness.Actor, err error, induced bool) {
	var pe *pgconn.PgError
	own := err != nil && !induced && !s.Subject.Indeterminate(err) && ownError(err, s.r.opts.Faults) &&
		(errors.As(err, &pe) || !s.r.faulty(a))
	s.r.calls.add(op, err, own, induced, func() (string, *harness.History, int) { return s.r.where(op) })
}

func (s tallied) Reset(ctx context.Context) error {
	err := s.Subject.Reset(ctx)
	s.count("Reset", operator, err, false)
	return err
}

func (s tallied) Commit(ctx context.Context, p harness.Payment, now time.Time) (string, error) {
	id, err := s.Subject.Commit(ctx, p, now)
	s.count("Commit", harness.Actor{Role: harness.Producer}, err, false)
	return id, err
}

func (s tallied) Rollback(ctx context.Context, p harness.Payment, now time.Time) error {
	err := s.Subject.Rollback(ctx, p, now)
	s.count("Rollback", harness.Actor{Role: harness.Producer}, err, false)
	return err
}

func (s tallied) Claim(ctx context.Context, d int, now time.Time, limit int) ([]Claimed, error) {
	got, err := s.Subject.Claim(ctx, d, now, limit)
	s.count("Claim", harness.Actor{Role: harness.Dispatcher, N: d}, err, false)
	return got, err
}

func (s tallied) Publish(ctx context.Context, d int, c Claimed, pub harness.Publisher) error {
	w := &watchedPublisher{Publisher: pub}
	err := s.Subject.Publish(ctx, d, c, w)
	s.count("Publish", harness.Actor{Role: harness.Dispatcher, N: d}, err, w.failed.Load())
	return err
}

func (s tallied) MarkPublished(ctx context.Context, d int, c Claimed, now time.Time) (bool, error) {
	changed, err := s.Subject.MarkPublished(ctx, d, c, now)
	s.count("MarkPublished", harness.Actor{Role: harness.Dispatcher, N: d}, err, false)
	return changed, err
}

func (s tallied) MarkFailed(ctx context.Context, d int, c Claimed, now time.Time, cause error) (bool, error) {
	changed, err := s.Subject.MarkFailed(ctx, d, c, now, cause)
	s.count("MarkFailed", harness.Actor{Role: harness.Dispatcher, N: d}, err, false)
	return changed, err
}

func (s tallied) NextAttemptAt(ctx context.Context) (time.Time, bool, error) {
	at, ok, err := s.Subject.NextAttemptAt(ctx)
	s.count("NextAttemptAt", operator, err, false)
	return at, ok, err
}

func (s tallied) Redrive(ctx context.Context, id string, now time.Time) (bool, error) {
	changed, err := s.Subject.Redrive(ctx, id, now)
	s.count("Redrive", operator, err, false)
	return changed, err
}

func (s tallied) Cleanup(ctx context.Context, now time.Time, retention time.Duration) (int, error) {
	n, err := s.Subject.Cleanup(ctx, now, retention)
	s.count("Cleanup", operator, err, false)
	return n, err
}

func (s tallied) Stats(ctx context.Context, now time.Time) (Stats, error) {
	st, err := s.Subject.Stats(ctx, now)
	s.count("Stats", operator, err, false)
	return st, err
}

func (s tallied) Handle(ctx context.Context, c int, m harness.Message, fp harness.Failpoints) error {
	var crashed atomic.Bool
	if fp != nil {
		inner := fp
		fp = func(p harness.Failpoint) error {
			err := inner(p)
			if err != nil {
				crashed.Store(true)
			}
			return err
		}
	}
	err := s.Subject.Handle(ctx, c, m, fp)
	s.count("Handle", harness.Actor{Role: harness.Consumer, N: c}, err, crashed.Load())
	return err
}

// Rescue is the subject's rescuer, for a subject that declares one (the
// harness calls it only then, and refuses to run a subject that declares
// one without the method).
func (s tallied) Rescue(ctx context.Context, now time.Time) (int, error) {
	n, err := s.Subject.(Rescuer).Rescue(ctx, now)
	s.count("Rescue", operator, err, false)
	return n, err
}

func (s tallied) Rows(ctx context.Context) ([]Row, error) {
	rows, err := s.Subject.Rows(ctx)
	s.count("Rows", operator, err, false)
	return rows, err
}

func (s tallied) Effects(ctx context.Context) (map[string]int, error) {
	effects, err := s.Subject.Effects(ctx)
	s.count("Effects", operator, err, false)
	return effects, err
}

// ReadBack is the subject's ReadBacker (the harness calls it only when
// the subject has one), counted as the four reads it stands for.
func (s tallied) ReadBack(ctx context.Context, now time.Time) (ReadBack, error) {
	rb, err := s.Subject.(ReadBacker).ReadBack(ctx, now)
	for _, op := range []string{"Rows", "Effects", "Stats", "NextAttemptAt"} {
		s.count(op, operator, err, false)
	}
	return rb, err
}

// watchedPublisher notes whether the broker failed a publish.
type watchedPublisher struct {
	harness.Publisher
	failed atomic.Bool
}

func (w *watchedPublisher) Publish(ctx context.Context, m harness.Message) error {
	err := w.Publisher.Publish(ctx, m)
	if err != nil {
		w.failed.Store(true)
	}
	return err
}

// faulty reports whether actor a's link has a fault on it.
func (r *runner) faulty(a harness.Actor) bool {
	return a.Role != harness.Operator && r.links.net != nil && r.links.net.Faulty(a.String())
}

// readBacks are the operations the harness calls to read the subject's
// state after a step.
var readBacks = map[string]bool{"Rows": true, "Effects": true, "Stats": true, "NextAttemptAt": true}

// where says where the run stands, for op's first failure: in words, and
// as the running check's history with how many of its steps have begun.
func (r *runner) where(op string) (string, *harness.History, int) {
	check := fmt.Sprintf("in check %d", r.sum.Checks)
	if r.sum.ShrinkRuns > 0 {
		check = "while shrinking a failure"
	}
	at, before := "at", "before its first step"
	if readBacks[op] {
		at, before = "reading back after", "reading back before its first step"
	}
	m := r.cur
	if m == nil || len(m.hist.Entries) == 0 {
		return check + ", " + before, nil, 0
	}
	n := len(m.hist.Entries)
	e := m.hist.Entries[n-1]
	return fmt.Sprintf("%s, %s step %d (%s by %s)", check, at, e.Step, e.Action, e.Actor), m.hist, n
}
