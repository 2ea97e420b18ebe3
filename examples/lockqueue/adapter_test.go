package lockqueue_test

// The adapter a team would write to put lockqueue through the step
// contract. Its claims are row locks held by open transactions, one per
// job, each on its own session of the dispatcher's link; the queue deletes
// a job that ran. Both are declared (model.Semantics LockHeld and
// DeleteOnSuccess). The consumer is examples/jobqueue's merchant service.

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/outboxcheck/outboxcheck/examples/jobqueue"
	"github.com/outboxcheck/outboxcheck/examples/lockqueue"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/impl"
	"github.com/outboxcheck/outboxcheck/model"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

var config = lockqueue.Config{MaxAttempts: 3, BackoffBase: time.Second, BackoffCap: 3}

// semantics is what the queue does, in outboxcheck's terms.
func semantics() model.Semantics {
	return model.Semantics{
		Lease:       time.Minute, // no lease: only a step of the harness's clock
		MaxAttempts: config.MaxAttempts, BackoffBase: config.BackoffBase, BackoffCap: config.BackoffCap,
		AttemptsOnFailure:    true, // a take counts nothing, a failure one
		DeadKeepsAvailableAt: true, // a dead job keeps its run_at
		LockHeld:             true, // the claim is the row lock of the run's transaction
		DeleteOnSuccess:      true, // a job that ran is deleted
		Without:              []model.Operation{model.OpRedrive, model.OpCleanup, model.OpStats, model.OpNextAttemptAt},
	}
}

// work is a job a dispatcher is running: its claim and the session whose
// open transaction holds the job's lock.
type work struct {
	claim string
	s     *impl.Session
	run   *lockqueue.Run
}

type adapter struct {
	env      stepcheck.Env
	q        *lockqueue.Queue
	sessions map[harness.Actor]*impl.Session // producer, consumers, operator
	runs     map[int]map[string]*work        // dispatcher → job id → its run
	idle     map[int][]*impl.Session         // dispatcher → sessions with no run
}

func newAdapter(q *lockqueue.Queue) stepcheck.NewSubject {
	return func(ctx context.Context, env stepcheck.Env) (stepcheck.Subject, error) {
		a := &adapter{env: env, q: q, sessions: map[harness.Actor]*impl.Session{},
			runs: map[int]map[string]*work{}, idle: map[int][]*impl.Session{}}
		conn, err := a.conn(ctx, operator)
		if err != nil {
			return a, err
		}
		_, err = conn.Exec(ctx, lockqueue.Schema+";"+jobqueue.Schema)
		return a, err
	}
}

var (
	producer = harness.Actor{Role: harness.Producer}
	operator = harness.Actor{Role: harness.Operator}
)

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

// session is an idle session of dispatcher d, new if it has none.
func (a *adapter) session(d int) (*impl.Session, error) {
	if n := len(a.idle[d]); n > 0 {
		s := a.idle[d][n-1]
		a.idle[d] = a.idle[d][:n-1]
		return s, nil
	}
	return impl.NewSession(a.env.ConnString(harness.Actor{Role: harness.Dispatcher, N: d}))
}

func (a *adapter) Reset(ctx context.Context) error {
	conn, err := a.conn(ctx, operator)
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, `DELETE FROM lq_payments; DELETE FROM lq_jobs; DELETE FROM jq_inbox; DELETE FROM jq_income`)
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
	if err := a.q.Insert(ctx, tx, id, lockqueue.Payment{ID: p.ID, MerchantID: p.MerchantID, AmountCents: p.AmountCents}, now); err != nil {
		return err
	}
	if !commit {
		return tx.Rollback(ctx)
	}
	return tx.Commit(ctx)
}

// Claim takes up to limit jobs, each in a transaction of its own on a
// session of its own, as a pool of limit workers would.
func (a *adapter) Claim(ctx context.Context, d int, now time.Time, limit int) ([]stepcheck.Claimed, error) {
	var out []stepcheck.Claimed
	for range limit {
		s, err := a.session(d)
		if err != nil {
			return out, err
		}
		conn, err := s.Conn(ctx)
		if err != nil {
			s.Cut()
			return out, err
		}
		run, err := a.q.Take(ctx, conn, now)
		if err != nil {
			s.Cut()
			return out, err
		}
		if run == nil {
			a.idle[d] = append(a.idle[d], s)
			break
		}
		w := &work{claim: a.env.NewID(), s: s, run: run}
		if a.runs[d] == nil {
			a.runs[d] = map[string]*work{}
		}
		a.runs[d][run.Job.ID] = w
		out = append(out, stepcheck.Claimed{ID: run.Job.ID, AggregateID: run.Job.AggregateID, EventType: "payment.succeeded",
			Payload: run.Job.Args, CreatedAt: run.Job.CreatedAt, Attempts: run.Job.Attempts, ClaimID: w.claim})
	}
	return out, nil
}

func (a *adapter) Publish(ctx context.Context, d int, c stepcheck.Claimed, pub harness.Publisher) error {
	return pub.Publish(ctx, harness.Message{ID: c.ID, Type: c.EventType, AggregateID: c.AggregateID,
		OccurredAt: c.CreatedAt, Payload: c.Payload})
}

// finish ends claim c's run with end (Done or Fail); false if no open
// transaction of that claim holds the job any more.
func (a *adapter) finish(d int, c stepcheck.Claimed, end func(*lockqueue.Run) error) (bool, error) {
	w := a.runs[d][c.ID]
	if w == nil || w.claim != c.ClaimID {
		return false, nil
	}
	delete(a.runs[d], c.ID)
	if err := end(w.run); err != nil {
		w.s.Cut()
		return false, err
	}
	a.idle[d] = append(a.idle[d], w.s)
	return true, nil
}

func (a *adapter) MarkPublished(ctx context.Context, d int, c stepcheck.Claimed, now time.Time) (bool, error) {
	return a.finish(d, c, func(r *lockqueue.Run) error { return a.q.Done(ctx, r) })
}

func (a *adapter) MarkFailed(ctx context.Context, d int, c stepcheck.Claimed, now time.Time, cause error) (bool, error) {
	return a.finish(d, c, func(r *lockqueue.Run) error { return a.q.Fail(ctx, r, now, cause) })
}

var errUndeclared = errors.New("lockqueue has no such operation (declared Without)")

func (a *adapter) NextAttemptAt(context.Context) (time.Time, bool, error) {
	return time.Time{}, false, errUndeclared
}
func (a *adapter) Redrive(context.Context, string, time.Time) (bool, error) {
	return false, errUndeclared
}
func (a *adapter) Cleanup(context.Context, time.Time, time.Duration) (int, error) {
	return 0, errUndeclared
}
func (a *adapter) Stats(context.Context, time.Time) (stepcheck.Stats, error) {
	return stepcheck.Stats{}, errUndeclared
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

// Rows reads the jobs as the seed's statuses: a job is PENDING until it
// fails, FAILED while it has attempts left, DEAD after. A running job
// looks as it did before it was taken: its lock is all that says so.
func (a *adapter) Rows(ctx context.Context) ([]stepcheck.Row, error) {
	conn, err := a.conn(ctx, operator)
	if err != nil {
		return nil, err
	}
	jobs, err := a.q.Jobs(ctx, conn)
	out := make([]stepcheck.Row, len(jobs))
	for i, j := range jobs {
		status := "PENDING"
		switch {
		case j.Attempts >= j.MaxAttempts:
			status = "DEAD"
		case j.Attempts > 0:
			status = "FAILED"
		}
		out[i] = stepcheck.Row{ID: j.ID, AggregateID: j.AggregateID, Payload: j.Args, Status: status,
			Attempts: j.Attempts, AvailableAt: j.RunAt, CreatedAt: j.CreatedAt}
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

// Crash cuts an actor's sessions; a dispatcher's runs die with them.
func (a *adapter) Crash(actor harness.Actor) {
	if actor.Role != harness.Dispatcher {
		if s := a.sessions[actor]; s != nil {
			s.Cut()
		}
		return
	}
	for _, w := range a.runs[actor.N] {
		w.s.Cut()
	}
	for _, s := range a.idle[actor.N] {
		s.Cut()
	}
	delete(a.runs, actor.N)
	delete(a.idle, actor.N)
}

// Indeterminate: an error leaves its call's effect unknown unless the
// server answered it with an error, or no connection was made.
func (a *adapter) Indeterminate(err error) bool {
	var pgErr *pgconn.PgError
	var connErr *pgconn.ConnectError
	return !errors.As(err, &pgErr) && !errors.As(err, &connErr)
}

func (a *adapter) Close() error {
	for d := range a.env.Dispatchers {
		a.Crash(harness.Actor{Role: harness.Dispatcher, N: d})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	for _, s := range a.sessions {
		errs = append(errs, s.Close(ctx))
	}
	return errors.Join(errs...)
}
