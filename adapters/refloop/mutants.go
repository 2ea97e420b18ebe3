package refloop

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/impl"
	"github.com/outboxcheck/outboxcheck/impl/mutants"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// AttemptsRolledBack is a loop mutant of bug class (a): the failure
// update is rolled back with the send (impl/mutants.FailureRolledBack's
// queries), so attempts never grow, there is no backoff, and a poison
// event is retried for ever and never reaches its dead letter. dead-letter
// kills it.
func AttemptsRolledBack(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	return Build(ctx, env, Options{Notify: true, Queries: mutants.FailureRolledBack.Queries})
}

// NaiveUTCDue is a loop mutant of bug class (c): the due query compares
// the timestamptz available_at with CURRENT_TIMESTAMP AT TIME ZONE 'UTC',
// a naive timestamp that PostgreSQL reads back in the session's TimeZone.
// East of UTC nothing is due for hours; west of it, rows come due early.
// In UTC it is correct, which is why it survives a UTC-only CI.
// timely-delivery kills it.
func NaiveUTCDue(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	return Build(ctx, env, Options{Notify: true, Queries: func(q *impl.Queries) {
		q.Claim = strings.Replace(q.Claim, "outbox_events.available_at <= $1", "outbox_events.available_at <= (CURRENT_TIMESTAMP AT TIME ZONE 'UTC') AND $1::timestamptz IS NOT NULL", 1)
	}})
}

// DeleteDead is a loop mutant of bug class (e), dead letters vanish: the
// relay deletes an event once it is DEAD and keeps no trace of it, so a
// poison or long-refused event is gone without a record. no-loss kills it.
func DeleteDead(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	s, err := Build(ctx, env, Options{Notify: true})
	if err != nil {
		return s, err
	}
	return deleteDead{s}, nil
}

type deleteDead struct{ *Subject }

func (d deleteDead) Dispatch(ctx context.Context, i int, pub harness.Publisher) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		sess, err := impl.NewSession(d.env.ConnString(harness.Actor{Role: harness.Dispatcher, N: i}))
		if err != nil {
			return
		}
		defer sess.Cut()
		for ctx.Err() == nil {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			if conn, err := sess.Conn(cctx); err == nil {
				if _, err := conn.Exec(cctx, `DELETE FROM outbox_events WHERE status = 'DEAD'`); err != nil {
					sess.Cut()
				}
			}
			cancel()
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	err := d.Subject.Dispatch(ctx, i, pub)
	<-done
	return err
}

// TimeoutIsShutdown is a loop mutant of bug class (f): the relay takes any
// context.DeadlineExceeded for its shutdown, here a publish that outlived
// its call's deadline on a slow broker, and stops for good while nothing
// says it died. relay-liveness kills it (and timely-delivery, once
// every relay has stopped so).
func TimeoutIsShutdown(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	s, err := Build(ctx, env, Options{Notify: true})
	if err != nil {
		return s, err
	}
	return timeoutIsShutdown{s}, nil
}

type timeoutIsShutdown struct{ *Subject }

func (m timeoutIsShutdown) Dispatch(ctx context.Context, i int, pub harness.Publisher) error {
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	return m.Subject.Dispatch(lctx, i, stopOnDeadline{pub, stop})
}

type stopOnDeadline struct {
	harness.Publisher
	stop context.CancelFunc
}

func (p stopOnDeadline) Publish(ctx context.Context, m harness.Message) error {
	err := p.Publisher.Publish(ctx, m)
	if errors.Is(err, context.DeadlineExceeded) {
		p.stop() // "we are shutting down"
	}
	return err
}
