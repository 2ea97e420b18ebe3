// Package jobqueue is a small job queue used as an outbox, written the way
// job-queue libraries are and not like the seed: a job is inserted in the
// business transaction; a worker fetches due jobs (FOR UPDATE SKIP LOCKED)
// under a lease and an attempt token, runs them (here: publishes the
// event), and completes them fenced by that token; a failed run is
// retried after a jittered, capped backoff, and a job is discarded once
// its attempts are spent; a rescuer returns jobs whose lease ran out; an
// operator may retry any job that is not running, granting one more
// attempt to a spent one. Its semantics differ from the seed's at every
// point outboxcheck lets a subject declare (see Semantics in its test):
// attempts count failures, not fetches; expired leases go back through the
// rescuer, not the fetch; "discarded", not DEAD; strict < edges.
//
// Time is a parameter of every call, so the harness can step it. It knows
// nothing of outboxcheck; stepcheck_test.go is the adapter a team writes.
package jobqueue

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5"
)

// Schema creates the tables; safe to run twice.
const Schema = `
CREATE TABLE IF NOT EXISTS jq_payments (
    id           text PRIMARY KEY,
    merchant_id  text NOT NULL,
    amount_cents bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS jq_jobs (
    id            text PRIMARY KEY,
    kind          text NOT NULL,
    aggregate_id  text NOT NULL,
    args          jsonb NOT NULL,
    state         text NOT NULL CHECK (state IN ('available', 'running', 'completed', 'retryable', 'discarded')),
    attempt       integer NOT NULL DEFAULT 0,
    max_attempts  integer NOT NULL,
    attempt_token text,
    lease_until   timestamptz,
    scheduled_at  timestamptz NOT NULL,
    created_at    timestamptz NOT NULL,
    finalized_at  timestamptz,
    errors        text[] NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS jq_jobs_due ON jq_jobs (scheduled_at, created_at) WHERE state IN ('available', 'retryable');
CREATE TABLE IF NOT EXISTS jq_inbox (
    event_id text PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS jq_income (
    payment_id   text PRIMARY KEY,
    event_id     text NOT NULL,
    merchant_id  text NOT NULL,
    amount_cents bigint NOT NULL
);`

// Config is the queue's knobs.
type Config struct {
	Lease       time.Duration // how long a fetched job is the worker's
	MaxAttempts int           // failures before a job is discarded
	BackoffBase time.Duration // the first retry waits this, doubling up to BackoffCap
	BackoffCap  time.Duration
	RescueDelay time.Duration // a rescued job runs again this long after the rescue
}

// Backoff is the wait after a job's k-th failure: BackoffBase·2^(k-1),
// capped at BackoffCap, plus up to a quarter more of jitter, drawn from
// the job's id and k (so a run replays).
func (c Config) Backoff(id string, k int) time.Duration {
	lo, hi := c.BackoffRange(k)
	h := fnv.New64a()
	h.Write([]byte(id))
	h.Write([]byte{byte(k)})
	span := (hi - lo) / time.Microsecond
	return lo + time.Duration(h.Sum64()%uint64(span+1))*time.Microsecond
}

// BackoffRange is Backoff's window after the k-th failure.
func (c Config) BackoffRange(k int) (lo, hi time.Duration) {
	lo = c.BackoffBase
	for i := 1; i < k && lo < c.BackoffCap; i++ {
		lo *= 2
	}
	lo = min(lo, c.BackoffCap)
	return lo, lo + lo/4
}

// Payment is the business fact; the job carries it as its args.
type Payment struct {
	ID          string `json:"id"`
	MerchantID  string `json:"merchant_id"`
	AmountCents int64  `json:"amount_cents"`
}

// Job is a fetched job: the worker's until its lease ends, fenced by Token.
type Job struct {
	ID          string
	AggregateID string
	Args        []byte
	Attempt     int // failures so far
	Token       string
	CreatedAt   time.Time
}

// Queue is the library's API. Every call takes the connection (or
// transaction) to run on and the time to use.
type Queue struct {
	Config Config
	SQL    Queries
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

// Fetch takes up to limit due jobs for a worker, under token, leased
// until now + Lease.
func (q *Queue) Fetch(ctx context.Context, conn *pgx.Conn, now time.Time, limit int, token string) ([]Job, error) {
	rows, err := conn.Query(ctx, q.SQL.Fetch, now, limit, token, now.Add(q.Config.Lease))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Job, error) {
		var j Job
		err := r.Scan(&j.ID, &j.AggregateID, &j.Args, &j.Attempt, &j.Token, &j.CreatedAt)
		return j, err
	})
}

// Complete records a job's run as done; false if the worker's token no
// longer holds the job (its lease was rescued, or another worker has it).
func (q *Queue) Complete(ctx context.Context, conn *pgx.Conn, j Job, now time.Time) (bool, error) {
	tag, err := conn.Exec(ctx, q.SQL.Complete, j.ID, j.Token, now)
	return tag.RowsAffected() == 1, err
}

// Fail records a failed run: retryable after the backoff, or discarded
// once the job's attempts are spent; false if the token no longer holds.
func (q *Queue) Fail(ctx context.Context, conn *pgx.Conn, j Job, now time.Time, cause error) (bool, error) {
	k := j.Attempt + 1
	tag, err := conn.Exec(ctx, q.SQL.Fail, j.ID, j.Token, now.Add(q.Config.Backoff(j.ID, k)), cause.Error())
	return tag.RowsAffected() == 1, err
}

// Rescue returns every running job whose lease ended before now: it
// counts as a failed attempt (a worker died holding it), so a job that
// kills its workers is discarded in the end.
func (q *Queue) Rescue(ctx context.Context, conn *pgx.Conn, now time.Time) (int, error) {
	tag, err := conn.Exec(ctx, q.SQL.Rescue, now, now.Add(q.Config.RescueDelay))
	return int(tag.RowsAffected()), err
}

// Retry makes a job that is not running available now, granting one
// more attempt to a spent one; false if it is running or unknown.
func (q *Queue) Retry(ctx context.Context, conn *pgx.Conn, id string, now time.Time) (bool, error) {
	tag, err := conn.Exec(ctx, q.SQL.Retry, id, now)
	return tag.RowsAffected() == 1, err
}

// Prune deletes completed jobs finalized before now - retention.
func (q *Queue) Prune(ctx context.Context, conn *pgx.Conn, now time.Time, retention time.Duration) (int, error) {
	tag, err := conn.Exec(ctx, q.SQL.Prune, now.Add(-retention))
	return int(tag.RowsAffected()), err
}
