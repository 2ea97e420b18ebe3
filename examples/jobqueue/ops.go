package jobqueue

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Stats is what the queue's dashboard shows.
type Stats struct {
	Waiting   int           // available, retryable and running jobs
	OldestAge time.Duration // age of the oldest waiting job
	Retryable int
	Discarded int
}

// Stats counts the jobs at now.
func (q *Queue) Stats(ctx context.Context, conn *pgx.Conn, now time.Time) (Stats, error) {
	var st Stats
	var oldest *time.Time
	err := conn.QueryRow(ctx, `SELECT
    count(*) FILTER (WHERE state IN ('available', 'retryable', 'running')),
    min(created_at) FILTER (WHERE state IN ('available', 'retryable', 'running')),
    count(*) FILTER (WHERE state = 'retryable'),
    count(*) FILTER (WHERE state = 'discarded')
FROM jq_jobs`).Scan(&st.Waiting, &oldest, &st.Retryable, &st.Discarded)
	if oldest != nil {
		st.OldestAge = now.Sub(*oldest)
	}
	return st, err
}

// NextRun is when the workers next have something to do: the earliest
// scheduled_at of a waiting job, or lease_until of a running one (when the
// rescuer may take it back).
func (q *Queue) NextRun(ctx context.Context, conn *pgx.Conn) (time.Time, bool, error) {
	var at *time.Time
	err := conn.QueryRow(ctx, `SELECT min(t) FROM (
    SELECT scheduled_at AS t FROM jq_jobs WHERE state IN ('available', 'retryable')
    UNION ALL
    SELECT lease_until FROM jq_jobs WHERE state = 'running') s`).Scan(&at)
	if at == nil {
		return time.Time{}, false, err
	}
	return *at, true, err
}

// JobRow is one job as stored.
type JobRow struct {
	ID, AggregateID, State string
	Args                   []byte
	Attempt                int
	Token                  *string
	LeaseUntil             *time.Time
	ScheduledAt, CreatedAt time.Time
	FinalizedAt            *time.Time
}

// Jobs lists every job.
func (q *Queue) Jobs(ctx context.Context, conn *pgx.Conn) ([]JobRow, error) {
	rows, err := conn.Query(ctx, `SELECT id, aggregate_id, state, args::text, attempt, attempt_token, lease_until,
    scheduled_at, created_at, finalized_at FROM jq_jobs ORDER BY id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (JobRow, error) {
		var j JobRow
		err := r.Scan(&j.ID, &j.AggregateID, &j.State, &j.Args, &j.Attempt, &j.Token, &j.LeaseUntil,
			&j.ScheduledAt, &j.CreatedAt, &j.FinalizedAt)
		return j, err
	})
}

// Credits counts the merchant income rows per event.
func Credits(ctx context.Context, conn *pgx.Conn) (map[string]int, error) {
	rows, err := conn.Query(ctx, `SELECT event_id, count(*) FROM jq_income GROUP BY event_id`)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	_, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct{}, error) {
		var id string
		var n int
		err := r.Scan(&id, &n)
		out[id] = n
		return struct{}{}, err
	})
	return out, err
}
