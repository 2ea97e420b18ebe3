package bench

import (
	"context"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// recording is a subject that logs every call that does the subject's
// work (not the harness's read-backs: Rows, Effects, Stats, NextAttemptAt,
// ReadBack) for replay.
type recording struct {
	stepcheck.Subject
	log *CallLog
}

// add logs a call: its outcome, and run, which makes it again.
func (r *recording) add(ops int, err error, run func(ctx context.Context, s stepcheck.Subject) error) {
	r.log.calls = append(r.log.calls, replayCall{ops: ops, fail: err != nil, run: run})
}

func (r *recording) Reset(ctx context.Context) error {
	err := r.Subject.Reset(ctx)
	r.add(1, err, func(ctx context.Context, s stepcheck.Subject) error { return s.Reset(ctx) })
	return err
}

func (r *recording) Commit(ctx context.Context, p harness.Payment, now time.Time) (string, error) {
	id, err := r.Subject.Commit(ctx, p, now)
	r.add(1, err, func(ctx context.Context, s stepcheck.Subject) error { _, err := s.Commit(ctx, p, now); return err })
	return id, err
}

func (r *recording) Rollback(ctx context.Context, p harness.Payment, now time.Time) error {
	err := r.Subject.Rollback(ctx, p, now)
	r.add(1, err, func(ctx context.Context, s stepcheck.Subject) error { return s.Rollback(ctx, p, now) })
	return err
}

func (r *recording) Claim(ctx context.Context, d int, now time.Time, limit int) ([]stepcheck.Claimed, error) {
	got, err := r.Subject.Claim(ctx, d, now, limit)
	r.add(1, err, func(ctx context.Context, s stepcheck.Subject) error {
		_, err := s.Claim(ctx, d, now, limit)
		return err
	})
	return got, err
}

func (r *recording) Publish(ctx context.Context, d int, c stepcheck.Claimed, pub harness.Publisher) error {
	err := r.Subject.Publish(ctx, d, c, pub)
	r.add(0, err, func(ctx context.Context, s stepcheck.Subject) error {
		if perr := s.Publish(ctx, d, c, accepting{}); perr != nil {
			return perr
		}
		return err // the harness's broker refused it: so does the replay
	})
	return err
}

func (r *recording) MarkPublished(ctx context.Context, d int, c stepcheck.Claimed, now time.Time) (bool, error) {
	ok, err := r.Subject.MarkPublished(ctx, d, c, now)
	r.add(1, err, func(ctx context.Context, s stepcheck.Subject) error {
		_, err := s.MarkPublished(ctx, d, c, now)
		return err
	})
	return ok, err
}

func (r *recording) MarkFailed(ctx context.Context, d int, c stepcheck.Claimed, now time.Time, cause error) (bool, error) {
	ok, err := r.Subject.MarkFailed(ctx, d, c, now, cause)
	r.add(1, err, func(ctx context.Context, s stepcheck.Subject) error {
		_, err := s.MarkFailed(ctx, d, c, now, cause)
		return err
	})
	return ok, err
}

func (r *recording) Redrive(ctx context.Context, eventID string, now time.Time) (bool, error) {
	ok, err := r.Subject.Redrive(ctx, eventID, now)
	r.add(1, err, func(ctx context.Context, s stepcheck.Subject) error {
		_, err := s.Redrive(ctx, eventID, now)
		return err
	})
	return ok, err
}

func (r *recording) Cleanup(ctx context.Context, now time.Time, retention time.Duration) (int, error) {
	n, err := r.Subject.Cleanup(ctx, now, retention)
	r.add(1, err, func(ctx context.Context, s stepcheck.Subject) error {
		_, err := s.Cleanup(ctx, now, retention)
		return err
	})
	return n, err
}

// Handle replays the failpoints' answers as the harness gave them.
func (r *recording) Handle(ctx context.Context, c int, m harness.Message, fp harness.Failpoints) error {
	var answers []error
	err := r.Subject.Handle(ctx, c, m, func(p harness.Failpoint) error {
		var err error
		if fp != nil {
			err = fp(p)
		}
		answers = append(answers, err)
		return err
	})
	r.add(1, err, func(ctx context.Context, s stepcheck.Subject) error {
		i := 0
		return s.Handle(ctx, c, m, func(harness.Failpoint) error {
			if i >= len(answers) {
				return nil
			}
			i++
			return answers[i-1]
		})
	})
	return err
}

func (r *recording) Crash(a harness.Actor) {
	r.Subject.Crash(a)
	r.add(0, nil, func(_ context.Context, s stepcheck.Subject) error { s.Crash(a); return nil })
}

// readingBack is a recording of a subject that reads back in one call:
// the harness looks for ReadBacker, so it stays (unrecorded: a read-back
// is the harness's work).
type readingBack struct{ *recording }

func (r readingBack) ReadBack(ctx context.Context, now time.Time) (stepcheck.ReadBack, error) {
	return r.Subject.(stepcheck.ReadBacker).ReadBack(ctx, now)
}
