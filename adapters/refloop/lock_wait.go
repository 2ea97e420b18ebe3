package refloop

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// LockWait is a loop mutant of bug class (d), one partitioned relay
// blocks all: its relay locks a batch with FOR UPDATE, without SKIP
// LOCKED, and publishes inside that transaction, with no deadline on any
// call. Alone it is correct (the row locks are its claim; a kill rolls
// them back). Cut off mid-publish, its session keeps the locks, and every
// other relay's FOR UPDATE waits behind them: nothing new is delivered
// until the partition ends. relay-isolation kills it.
func LockWait(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	s, err := Build(ctx, env, Options{Notify: true})
	if err != nil {
		return s, err
	}
	return lockWait{s}, nil
}

type lockWait struct{ *Subject }

func (m lockWait) Dispatch(ctx context.Context, i int, pub harness.Publisher) error {
	cfg, err := pgx.ParseConfig(m.env.ConnString(harness.Actor{Role: harness.Dispatcher, N: i}))
	if err != nil {
		return err
	}
	for ctx.Err() == nil {
		conn, err := pgx.ConnectConfig(ctx, cfg) // no deadline: the bug's other half
		if err == nil {
			for ctx.Err() == nil {
				n, err := m.batch(ctx, conn, pub)
				if err != nil {
					break
				}
				if n == 0 {
					sleep(ctx, 20*time.Millisecond)
				}
			}
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			conn.Close(cctx)
			cancel()
		}
		sleep(ctx, 50*time.Millisecond)
	}
	return nil
}

type lockedRow struct {
	id, aggregate, typ string
	seq                int64
	payload            []byte
	created            time.Time
	attempts           int
}

// batch locks due rows, publishes each inside the lock, and records each
// outcome in the same transaction.
func (m lockWait) batch(ctx context.Context, conn *pgx.Conn, pub harness.Publisher) (int, error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(ctx) // with ctx gone, pgx closes the connection and the server rolls back
	rows, err := tx.Query(ctx, `SELECT id, aggregate_id, event_type, sequence, payload, created_at, attempts
		FROM outbox_events WHERE status IN ('PENDING', 'FAILED') AND available_at <= $1
		ORDER BY available_at, created_at LIMIT 10 FOR UPDATE`, time.Now())
	if err != nil {
		return 0, err
	}
	evs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (e lockedRow, err error) {
		err = r.Scan(&e.id, &e.aggregate, &e.typ, &e.seq, &e.payload, &e.created, &e.attempts)
		return e, err
	})
	if err != nil {
		return 0, err
	}
	for _, e := range evs {
		msg := harness.Message{ID: e.id, Type: e.typ, AggregateID: e.aggregate, Sequence: e.seq, OccurredAt: e.created, Payload: e.payload}
		if perr := pub.Publish(ctx, msg); perr == nil {
			_, err = tx.Exec(ctx, `UPDATE outbox_events SET status = 'PUBLISHED', published_at = $2 WHERE id = $1`, e.id, time.Now())
		} else {
			n := e.attempts + 1
			status := "FAILED"
			if n >= m.env.MaxAttempts {
				status = "DEAD"
			}
			_, err = tx.Exec(ctx, `UPDATE outbox_events SET status = $2, attempts = $3, available_at = $4, last_error = $5 WHERE id = $1`,
				e.id, status, n, time.Now().Add(m.MinBackoff(n)), perr.Error())
		}
		if err != nil {
			return 0, err
		}
	}
	return len(evs), tx.Commit(ctx)
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
