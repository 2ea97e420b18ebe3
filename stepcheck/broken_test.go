package stepcheck_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// A subject one of whose operations never succeeds, failing with errors
// of its own, is the subject's failure, named by that operation and its
// first error: not an infrastructure error, not a pass, and not the
// property violation that follows from it. Errors the run itself explains
// (timeouts) stay infrastructure, and a subject that fails only some of
// its calls, under faults, passes.
func TestOnlyASubjectThatNeverSucceedsIsBroken(t *testing.T) {
	setFlag(t, "rapid.checks", "20")
	setFlag(t, "rapid.shrinktime", "2s")
	setFlag(t, "rapid.nofailfile", "true") // its failures are on purpose: nothing to replay later
	run := func(t *testing.T, newSubject stepcheck.NewSubject, opts stepcheck.Options) (harness.Summary, *harness.Recorder) {
		t.Helper()
		rec := harness.NewRecorder(t.Name(), nil)
		opts.DatabaseURL = pgscratch.NewDatabase(t).URL
		return stepcheck.Run(rec, newSubject, opts), rec
	}
	boom := errors.New("boom: not implemented")

	t.Run("every method fails", func(t *testing.T) {
		sum, rec := run(t, always(boom), stepcheck.Options{})
		f := sum.Failure
		if f == nil || !f.SubjectError || f.Operation != "Reset" || !strings.Contains(f.Message, "boom: not implemented") ||
			!strings.Contains(f.Message, "in check 1, before its first step") || !rec.Failed() {
			t.Fatalf("failure %+v", f)
		}
		if sum.ShrinkRuns > 1 {
			t.Errorf("%d shrink runs: a subject's failure is not shrunk", sum.ShrinkRuns)
		}
	})
	t.Run("the subject cannot be built", func(t *testing.T) {
		sum, _ := run(t, func(context.Context, stepcheck.Env) (stepcheck.Subject, error) { return nil, boom }, stepcheck.Options{})
		if f := sum.Failure; f == nil || !f.SubjectError || f.Operation != "NewSubject" || !strings.Contains(f.Message, "boom") {
			t.Fatalf("failure %+v", f)
		}
	})
	t.Run("one operation always fails", func(t *testing.T) {
		sum, rec := run(t, failingRef(func(op string, n int64) error {
			if op == "Commit" {
				return fmt.Errorf("create payment: %w", boom)
			}
			return nil
		}), stepcheck.Options{})
		f := sum.Failure
		if f == nil || !f.SubjectError || f.Operation != "Commit" || !strings.Contains(f.Message, "boom") || !rec.Failed() {
			t.Fatalf("a subject whose Commit never succeeds (so nothing is ever to be checked): failure %+v; %v", f, sum)
		}
		if es := f.History.Entries; es[len(es)-1].Action != "Commit" || !strings.Contains(es[len(es)-1].Result, "boom") {
			t.Fatalf("the story does not end at the first failure: %s", f.History.Story())
		}
	})
	t.Run("a violation follows from it", func(t *testing.T) {
		sum, _ := run(t, failingRef(func(op string, n int64) error {
			if op == "MarkPublished" {
				return fmt.Errorf("mark published: %w", boom)
			}
			return nil
		}), stepcheck.Options{})
		if f := sum.Failure; f == nil || !f.SubjectError || f.Operation != "MarkPublished" {
			t.Fatalf("a subject whose MarkPublished never succeeds (so nothing is ever published): failure %+v", f)
		}
	})
	t.Run("every call times out", func(t *testing.T) {
		sum, _ := run(t, always(fmt.Errorf("reset: %w", context.DeadlineExceeded)), stepcheck.Options{})
		if f := sum.Failure; f == nil || !f.Infrastructure || f.SubjectError {
			t.Fatalf("failure %+v, want infrastructure", f)
		}
	})
	t.Run("some calls fail, under faults", func(t *testing.T) {
		sum, rec := run(t, failingRef(func(op string, n int64) error {
			switch {
			case op == "Commit" && n%2 == 0, op == "Handle" && n%3 == 0, op == "MarkFailed" && n%3 == 1:
				return fmt.Errorf("%s: %w", op, boom)
			}
			return nil
		}), stepcheck.Options{Faults: true})
		if sum.Failure != nil || rec.Failed() {
			t.Fatalf("a subject failing some of its calls did not pass: %+v\n%s", sum.Failure, rec.Output())
		}
	})
}

// always builds a subject every call of which returns err.
func always(err error) stepcheck.NewSubject {
	return func(context.Context, stepcheck.Env) (stepcheck.Subject, error) { return brokenSubject{err}, nil }
}

type brokenSubject struct{ err error }

func (b brokenSubject) Reset(context.Context) error { return b.err }
func (b brokenSubject) Commit(context.Context, harness.Payment, time.Time) (string, error) {
	return "", b.err
}
func (b brokenSubject) Rollback(context.Context, harness.Payment, time.Time) error { return b.err }
func (b brokenSubject) Claim(context.Context, int, time.Time, int) ([]stepcheck.Claimed, error) {
	return nil, b.err
}
func (b brokenSubject) Publish(context.Context, int, stepcheck.Claimed, harness.Publisher) error {
	return b.err
}
func (b brokenSubject) MarkPublished(context.Context, int, stepcheck.Claimed, time.Time) (bool, error) {
	return false, b.err
}
func (b brokenSubject) MarkFailed(context.Context, int, stepcheck.Claimed, time.Time, error) (bool, error) {
	return false, b.err
}
func (b brokenSubject) NextAttemptAt(context.Context) (time.Time, bool, error) {
	return time.Time{}, false, b.err
}
func (b brokenSubject) Redrive(context.Context, string, time.Time) (bool, error) { return false, b.err }
func (b brokenSubject) Cleanup(context.Context, time.Time, time.Duration) (int, error) {
	return 0, b.err
}
func (b brokenSubject) Stats(context.Context, time.Time) (stepcheck.Stats, error) {
	return stepcheck.Stats{}, b.err
}
func (b brokenSubject) Handle(context.Context, int, harness.Message, harness.Failpoints) error {
	return b.err
}
func (b brokenSubject) Rows(context.Context) ([]stepcheck.Row, error)   { return nil, b.err }
func (b brokenSubject) Effects(context.Context) (map[string]int, error) { return nil, b.err }
func (b brokenSubject) Crash(harness.Actor)                             {}
func (b brokenSubject) Indeterminate(error) bool                        { return false }
func (b brokenSubject) Close() error                                    { return nil }

// failingRef builds the reference with some calls failing before they do
// anything: fail(op, n) is the error of the n-th call of op (from 1), or
// nil to let the reference make it.
func failingRef(fail func(op string, n int64) error) stepcheck.NewSubject {
	return func(ctx context.Context, env stepcheck.Env) (stepcheck.Subject, error) {
		s, err := reference.New(ctx, env)
		return &failingSubject{Subject: s, fail: fail}, err
	}
}

type failingSubject struct {
	stepcheck.Subject
	fail                               func(op string, n int64) error
	commits, handles, marks, published atomic.Int64
}

func (s *failingSubject) Commit(ctx context.Context, p harness.Payment, now time.Time) (string, error) {
	if err := s.fail("Commit", s.commits.Add(1)); err != nil {
		return "", err
	}
	return s.Subject.Commit(ctx, p, now)
}

func (s *failingSubject) Handle(ctx context.Context, c int, m harness.Message, fp harness.Failpoints) error {
	if err := s.fail("Handle", s.handles.Add(1)); err != nil {
		return err
	}
	return s.Subject.Handle(ctx, c, m, fp)
}

func (s *failingSubject) MarkFailed(ctx context.Context, d int, c stepcheck.Claimed, now time.Time, cause error) (bool, error) {
	if err := s.fail("MarkFailed", s.marks.Add(1)); err != nil {
		return false, err
	}
	return s.Subject.MarkFailed(ctx, d, c, now, cause)
}

func (s *failingSubject) MarkPublished(ctx context.Context, d int, c stepcheck.Claimed, now time.Time) (bool, error) {
	if err := s.fail("MarkPublished", s.published.Add(1)); err != nil {
		return false, err
	}
	return s.Subject.MarkPublished(ctx, d, c, now)
}
