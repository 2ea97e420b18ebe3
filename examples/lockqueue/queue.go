// Package lockqueue is a job queue used as an outbox whose claim is a row
// lock, not a lease: a worker begins a transaction, locks one due job
// (FOR UPDATE SKIP LOCKED), runs it (here: publishes the event), and in
// the same transaction deletes it on success or records the failure, then
// commits. Nothing on the row says it is taken: the lock is the claim, and
// it ends with the transaction or the worker's session. A failed job runs
// again after a capped exponential backoff and stays, as a dead job, once
// its attempts are spent.
//
// Time is a parameter of every call, so the harness can step it. It knows
// nothing of outboxcheck; adapter_test.go is the adapter a team writes.
package lockqueue

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// Schema creates the tables; safe to run twice.
const Schema = `
CREATE TABLE IF NOT EXISTS lq_payments (
    id           text PRIMARY KEY,
    merchant_id  text NOT NULL,
    amount_cents bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS lq_jobs (
    id           text PRIMARY KEY,
    aggregate_id text NOT NULL,
    args         jsonb NOT NULL,
    attempts     integer NOT NULL DEFAULT 0,
    max_attempts integer NOT NULL,
    run_at       timestamptz NOT NULL,
    created_at   timestamptz NOT NULL,
    last_error   text
);`

// Config is the queue's knobs.
type Config struct {
	MaxAttempts int
	BackoffBase time.Duration // the wait after the k-th failure is BackoffBase × 2^min(k, BackoffCap)
	BackoffCap  int
}

// Backoff is the wait after a failure that leaves a job at k attempts.
func (c Config) Backoff(k int) time.Duration {
	return c.BackoffBase * time.Duration(int64(1)<<min(k, c.BackoffCap))
}

// Payment is a job's args.
type Payment struct {
	ID          string `json:"id"`
	MerchantID  string `json:"merchant_id"`
	AmountCents int64  `json:"amount_cents"`
}

// Queries is the queue's SQL, one statement each, so that a variant (a
// bug under test) is a one-line change of one of them.
type Queries struct {
	InsertPayment, InsertJob string
	Take, Done, Fail         string
}

// DefaultQueries is the queue's own SQL.
func DefaultQueries() Queries {
	return Queries{
		InsertPayment: `INSERT INTO lq_payments (id, merchant_id, amount_cents) VALUES ($1, $2, $3)`,
		InsertJob: `INSERT INTO lq_jobs (id, aggregate_id, args, max_attempts, run_at, created_at)
VALUES ($1, $2, $3, $4, $5, $5)`,
		Take: `SELECT id, aggregate_id, args::text, attempts, created_at FROM lq_jobs
WHERE run_at <= $1 AND attempts < max_attempts
ORDER BY run_at, created_at
LIMIT 1
FOR UPDATE SKIP LOCKED`,
		Done: `DELETE FROM lq_jobs WHERE id = $1`,
		Fail: `UPDATE lq_jobs SET attempts = attempts + 1, last_error = $3,
    run_at = CASE WHEN attempts + 1 >= max_attempts THEN run_at ELSE $2 END
WHERE id = $1`,
	}
}

// Queue is the library's API.
type Queue struct {
	Config Config
	SQL    Queries
	// CommitOnTake commits Take's transaction at once (a variant: with a
	// Take that deletes, the job is gone before it has run).
	CommitOnTake bool
}

// New is a queue with the given knobs and its own SQL.
func New(c Config) *Queue { return &Queue{Config: c, SQL: DefaultQueries()} }

// Insert writes the payment and its job in the caller's transaction: the
// outbox's one promise.
func (q *Queue) Insert(ctx context.Context, tx pgx.Tx, id string, p Payment, now time.Time) error {
	args, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, q.SQL.InsertPayment, p.ID, p.MerchantID, p.AmountCents); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, q.SQL.InsertJob, id, p.ID, args, q.Config.MaxAttempts, now)
	return err
}

// Job is a taken job.
type Job struct {
	ID          string
	AggregateID string
	Args        []byte
	Attempts    int // failures so far
	CreatedAt   time.Time
}

// Run is a job being run: the open transaction that holds its lock.
type Run struct {
	Job Job
	tx  pgx.Tx
}

// Take begins a transaction on conn and locks one due job in it; nil if
// none is due (the transaction is then over). The job is the caller's
// until Done or Fail commits, or conn's session ends.
func (q *Queue) Take(ctx context.Context, conn *pgx.Conn, now time.Time) (*Run, error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, err
	}
	var j Job
	err = tx.QueryRow(ctx, q.SQL.Take, now).Scan(&j.ID, &j.AggregateID, &j.Args, &j.Attempts, &j.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, tx.Rollback(ctx)
	}
	if err != nil {
		_ = tx.Rollback(ctx)
		return nil, err
	}
	if q.CommitOnTake {
		return &Run{Job: j}, tx.Commit(ctx)
	}
	return &Run{Job: j, tx: tx}, nil
}

// Done deletes the job and commits: it ran.
func (q *Queue) Done(ctx context.Context, r *Run) error {
	if r.tx == nil {
		return nil // committed at Take
	}
	if _, err := r.tx.Exec(ctx, q.SQL.Done, r.Job.ID); err != nil {
		return err
	}
	return r.tx.Commit(ctx)
}

// Fail records a failed run and commits: the job runs again after the
// backoff, or stays dead once its attempts are spent.
func (q *Queue) Fail(ctx context.Context, r *Run, now time.Time, cause error) error {
	if r.tx == nil {
		return nil // committed at Take
	}
	if _, err := r.tx.Exec(ctx, q.SQL.Fail, r.Job.ID, now.Add(q.Config.Backoff(r.Job.Attempts+1)), cause.Error()); err != nil {
		return err
	}
	return r.tx.Commit(ctx)
}

// JobRow is a job as an operator reads it.
type JobRow struct {
	Job
	MaxAttempts int
	RunAt       time.Time
}

// Jobs reads every job.
func (q *Queue) Jobs(ctx context.Context, conn *pgx.Conn) ([]JobRow, error) {
	rows, err := conn.Query(ctx, `SELECT id, aggregate_id, args::text, attempts, max_attempts, run_at, created_at FROM lq_jobs ORDER BY id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (JobRow, error) {
		var j JobRow
		err := r.Scan(&j.ID, &j.AggregateID, &j.Args, &j.Attempts, &j.MaxAttempts, &j.RunAt, &j.CreatedAt)
		return j, err
	})
}
