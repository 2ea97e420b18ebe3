package jobqueue_test

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/outboxcheck/outboxcheck/examples/jobqueue"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/impl"
	"github.com/outboxcheck/outboxcheck/model"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// This file is the step-contract adapter a team writes for its job queue:
// one method per step, and the semantics it declares where its queue
// differs from the seed's outbox.

// config is the queue as the test runs it.
var config = jobqueue.Config{Lease: 30 * time.Second, MaxAttempts: 3,
	BackoffBase: time.Second, BackoffCap: 8 * time.Second, RescueDelay: 2 * time.Second}

// semantics is what the queue does, in outboxcheck's terms.
func semantics(c jobqueue.Config) model.Semantics {
	return model.Semantics{
		Lease: c.Lease, MaxAttempts: c.MaxAttempts,
		Backoff:              c.BackoffRange,                                               // jittered and capped
		AttemptsOnFailure:    true,                                                         // a fetch does not count, a failure does
		Rescue:               &model.RescueRule{Delay: c.RescueDelay, CountsAttempt: true}, // the rescuer takes expired leases back
		Strict:               true,                                                         // due once scheduled_at < now
		DeadKeepsAvailableAt: true,                                                         // a discarded job keeps its scheduled_at
		Redrive:              model.RedriveRule{AnyIdle: true, OneMore: true},              // retry any job not running; one more attempt
		Names: map[model.Status]string{model.Pending: "available", model.Publishing: "running",
			model.Published: "completed", model.Failed: "retryable", model.Dead: "discarded"},
	}
}

type adapter struct {
	env      stepcheck.Env
	q        *jobqueue.Queue
	sessions map[harness.Actor]*impl.Session
}

// newAdapter builds the adapter over a queue whose SQL is sql.
func newAdapter(sql jobqueue.Queries) stepcheck.NewSubject {
	return func(ctx context.Context, env stepcheck.Env) (stepcheck.Subject, error) {
		q := jobqueue.New(config)
		q.SQL = sql
		a := &adapter{env: env, q: q, sessions: map[harness.Actor]*impl.Session{}}
		conn, err := a.conn(ctx, harness.Actor{Role: harness.Operator})
		if err != nil {
			return a, err
		}
		_, err = conn.Exec(ctx, jobqueue.Schema)
		return a, err
	}
}

// conn is actor a's own connection: its own link, which the harness can
// cut or partition, opened again after it died.
func (a *adapter) conn(ctx context.Context, actor harness.Actor) (*pgx.Conn, error) {
	s := a.sessions[actor]
	if s == nil {
		var err error
		if s, err = impl.NewSession(a.env.ConnString(actor)); err != nil {
			return nil, err
		}
		a.sessions[actor] = s
	}
	return s.Conn(ctx)
}

var (
	producer = harness.Actor{Role: harness.Producer}
	operator = harness.Actor{Role: harness.Operator}
)

func dispatcher(d int) harness.Actor { return harness.Actor{Role: harness.Dispatcher, N: d} }

func (a *adapter) Reset(ctx context.Context) error {
	conn, err := a.conn(ctx, operator)
	if err != nil {
		return err
	}
	// DELETE, not TRUNCATE: Reset runs before every check and every replay
	// while shrinking, and on a few rows DELETE is ten times faster.
	_, err = conn.Exec(ctx, `DELETE FROM jq_payments; DELETE FROM jq_jobs; DELETE FROM jq_inbox; DELETE FROM jq_income`)
	return err
}

func (a *adapter) Commit(ctx context.Context, p harness.Payment, now time.Time) (string, error) {
	id := a.env.NewID()
	return id, a.produce(ctx, id, p, now, true)
}

func (a *adapter) Rollback(ctx context.Context, p harness.Payment, now time.Time) error {
	return a.produce(ctx, a.env.NewID(), p, now, false)
}

func (a *adapter) produce(ctx context.Context, id string, p harness.Payment, now time.Time, commit bool) error {
	conn, err := a.conn(ctx, producer)
	if err != nil {
		return err
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if err := a.q.Insert(ctx, tx, id, jobqueue.Payment{ID: p.ID, MerchantID: p.MerchantID, AmountCents: p.AmountCents}, now); err != nil {
		return err
	}
	if !commit {
		return tx.Rollback(ctx)
	}
	return tx.Commit(ctx)
}

func (a *adapter) Claim(ctx context.Context, d int, now time.Time, limit int) ([]stepcheck.Claimed, error) {
	conn, err := a.conn(ctx, dispatcher(d))
	if err != nil {
		return nil, err
	}
	jobs, err := a.q.Fetch(ctx, conn, now, limit, a.env.NewID())
	out := make([]stepcheck.Claimed, len(jobs))
	for i, j := range jobs {
		out[i] = stepcheck.Claimed{ID: j.ID, AggregateID: j.AggregateID, EventType: "payment.succeeded",
			Payload: j.Args, CreatedAt: j.CreatedAt, Attempts: j.Attempt, ClaimID: j.Token}
	}
	return out, err
}

func (a *adapter) Publish(ctx context.Context, d int, c stepcheck.Claimed, pub harness.Publisher) error {
	return pub.Publish(ctx, harness.Message{ID: c.ID, Type: c.EventType, AggregateID: c.AggregateID,
		OccurredAt: c.CreatedAt, Payload: c.Payload})
}

func job(c stepcheck.Claimed) jobqueue.Job {
	return jobqueue.Job{ID: c.ID, AggregateID: c.AggregateID, Args: c.Payload, Attempt: c.Attempts, Token: c.ClaimID}
}

func (a *adapter) MarkPublished(ctx context.Context, d int, c stepcheck.Claimed, now time.Time) (bool, error) {
	conn, err := a.conn(ctx, dispatcher(d))
	if err != nil {
		return false, err
	}
	return a.q.Complete(ctx, conn, job(c), now)
}

func (a *adapter) MarkFailed(ctx context.Context, d int, c stepcheck.Claimed, now time.Time, cause error) (bool, error) {
	conn, err := a.conn(ctx, dispatcher(d))
	if err != nil {
		return false, err
	}
	return a.q.Fail(ctx, conn, job(c), now, cause)
}

func (a *adapter) NextAttemptAt(ctx context.Context) (time.Time, bool, error) {
	conn, err := a.conn(ctx, operator)
	if err != nil {
		return time.Time{}, false, err
	}
	return a.q.NextRun(ctx, conn)
}

// Rescue is the queue's rescuer, declared in semantics (model.RescueRule).
func (a *adapter) Rescue(ctx context.Context, now time.Time) (int, error) {
	conn, err := a.conn(ctx, operator)
	if err != nil {
		return 0, err
	}
	return a.q.Rescue(ctx, conn, now)
}

func (a *adapter) Redrive(ctx context.Context, id string, now time.Time) (bool, error) {
	conn, err := a.conn(ctx, operator)
	if err != nil {
		return false, err
	}
	return a.q.Retry(ctx, conn, id, now)
}

func (a *adapter) Cleanup(ctx context.Context, now time.Time, retention time.Duration) (int, error) {
	conn, err := a.conn(ctx, operator)
	if err != nil {
		return 0, err
	}
	return a.q.Prune(ctx, conn, now, retention)
}

func (a *adapter) Stats(ctx context.Context, now time.Time) (stepcheck.Stats, error) {
	conn, err := a.conn(ctx, operator)
	if err != nil {
		return stepcheck.Stats{}, err
	}
	st, err := a.q.Stats(ctx, conn, now)
	return stepcheck.Stats{Pending: st.Waiting, OldestPendingAge: st.OldestAge, Failed: st.Retryable, Dead: st.Discarded}, err
}

func (a *adapter) Handle(ctx context.Context, c int, m harness.Message, fp harness.Failpoints) error {
	conn, err := a.conn(ctx, harness.Actor{Role: harness.Consumer, N: c})
	if err != nil {
		return err
	}
	return jobqueue.Credit(ctx, conn, m.ID, m.Payload, func(committed bool) error {
		if committed {
			return fp(harness.AfterCommit)
		}
		return fp(harness.BeforeCommit)
	})
}

func (a *adapter) Rows(ctx context.Context) ([]stepcheck.Row, error) {
	conn, err := a.conn(ctx, operator)
	if err != nil {
		return nil, err
	}
	jobs, err := a.q.Jobs(ctx, conn)
	out := make([]stepcheck.Row, len(jobs))
	for i, j := range jobs {
		r := stepcheck.Row{ID: j.ID, AggregateID: j.AggregateID, Payload: j.Args, Status: j.State, Attempts: j.Attempt,
			AvailableAt: j.ScheduledAt, CreatedAt: j.CreatedAt}
		if j.Token != nil {
			r.ClaimID = *j.Token
		}
		if j.LeaseUntil != nil {
			r.ClaimExpiresAt = *j.LeaseUntil
		}
		if j.FinalizedAt != nil && j.State == "completed" {
			r.PublishedAt = *j.FinalizedAt
		}
		out[i] = r
	}
	return out, err
}

func (a *adapter) Effects(ctx context.Context) (map[string]int, error) {
	conn, err := a.conn(ctx, operator)
	if err != nil {
		return nil, err
	}
	return jobqueue.Credits(ctx, conn)
}

func (a *adapter) Crash(actor harness.Actor) {
	if s := a.sessions[actor]; s != nil {
		s.Cut()
	}
}

// Indeterminate: an error leaves its call's effect unknown unless the
// server answered it with an error, or no connection was made. When in
// doubt, unknown: the harness then reads the database to find out.
func (a *adapter) Indeterminate(err error) bool {
	var pgErr *pgconn.PgError
	var connErr *pgconn.ConnectError
	return !errors.As(err, &pgErr) && !errors.As(err, &connErr)
}

func (a *adapter) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	for _, s := range a.sessions {
		errs = append(errs, s.Close(ctx))
	}
	return errors.Join(errs...)
}
