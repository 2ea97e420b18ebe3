package refloop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/harness"
)

// lockHeld is a relay whose claim is the row locks of the transaction it
// publishes in: it locks a batch of due rows with FOR UPDATE, publishes
// each inside that transaction, records each outcome in it, and commits.
// A kill rolls it back, freeing the rows. The variants' bugs are its
// switches.
type lockHeld struct {
	*Subject
	// skipLocked locks with SKIP LOCKED: relays never wait on each other.
	skipLocked bool
	// bounded gives each database call the call timeout, and each
	// publish the declared ack deadline (Options.AckDeadline); otherwise
	// nothing has a deadline.
	bounded bool
	// batchAck is the batch-ack bug: a publish whose ack deadline passed
	// ends the batch, and every row of it not yet sent is marked
	// published with it.
	batchAck bool
	// idleTimeout, if set, is the relay's sessions'
	// idle_in_transaction_session_timeout: the server ends a session cut
	// off inside its transaction after it, freeing its rows for the
	// others. takeover is the bound the relay then declares (0: none).
	idleTimeout, takeover time.Duration
	// releaseEarly is the lock-released-early bug: the transaction that
	// locked the batch commits before the publishes, so the rows are
	// free to another relay while this one publishes them.
	releaseEarly bool
}

// PublishesOnce declares the variant's claims exclusive for as long as a
// publish takes (loopcheck.OncePublisher): the row locks are held
// through it, so two relays never publish one event unless a publish was
// ambiguous or a relay was cut off.
func (m lockHeld) PublishesOnce() bool { return true }

// TakeoverBound is the variant's declared takeover (loopcheck.Takeover):
// 0, none, unless the server ends its silent sessions.
func (m lockHeld) TakeoverBound() time.Duration { return m.takeover }

// CrashLoopBound declares that the variant does not end a crash loop
// (loopcheck.CrashLooper): it counts an attempt in the transaction a
// crash rolls back, so an event that crashes it is retried for ever, and
// crash-loop is not applicable. Its variants' bugs are elsewhere.
func (m lockHeld) CrashLoopBound() time.Duration { return 0 }

func (m lockHeld) Dispatch(ctx context.Context, i int, pub harness.Publisher) error {
	cfg, err := pgx.ParseConfig(m.env.ConnString(harness.Actor{Role: harness.Dispatcher, N: i}))
	if err != nil {
		return err
	}
	if m.bounded {
		cfg.ConnectTimeout = callTimeout
	}
	if m.idleTimeout > 0 {
		cfg.RuntimeParams["idle_in_transaction_session_timeout"] = fmt.Sprint(m.idleTimeout.Milliseconds())
	}
	for ctx.Err() == nil {
		conn, err := pgx.ConnectConfig(ctx, cfg)
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

// call runs f with the call timeout when the relay is bounded.
func (m lockHeld) call(ctx context.Context, f func(context.Context) error) error {
	if !m.bounded {
		return f(ctx)
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return f(cctx)
}

// batch locks due rows, publishes each inside the lock, and records each
// outcome in the same transaction.
func (m lockHeld) batch(ctx context.Context, conn *pgx.Conn, pub harness.Publisher) (int, error) {
	var tx pgx.Tx
	if err := m.call(ctx, func(c context.Context) (err error) { tx, err = conn.Begin(c); return err }); err != nil {
		return 0, err
	}
	defer func() { // with ctx gone, pgx closes the connection and the server rolls back
		if tx != nil { // a releaseEarly relay whose second Begin failed has none
			tx.Rollback(ctx)
		}
	}()
	lock := "FOR UPDATE"
	if m.skipLocked {
		lock += " SKIP LOCKED"
	}
	var evs []lockedRow
	err := m.call(ctx, func(c context.Context) error {
		rows, err := tx.Query(c, `SELECT id, aggregate_id, event_type, sequence, payload, created_at, attempts
		FROM outbox_events WHERE status IN ('PENDING', 'FAILED') AND available_at <= $1
		ORDER BY available_at, created_at LIMIT 10 `+lock, time.Now())
		if err != nil {
			return err
		}
		evs, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (e lockedRow, err error) {
			err = r.Scan(&e.id, &e.aggregate, &e.typ, &e.seq, &e.payload, &e.created, &e.attempts)
			return e, err
		})
		return err
	})
	if err != nil {
		return 0, err
	}
	if m.releaseEarly && len(evs) > 0 { // the bug: the locks end here, before the publishes
		if err := m.call(ctx, tx.Commit); err != nil {
			return 0, err
		}
		if err := m.call(ctx, func(c context.Context) (err error) { tx, err = conn.Begin(c); return err }); err != nil {
			return 0, err
		}
	}
	for k, e := range evs {
		msg := harness.Message{ID: e.id, Type: e.typ, AggregateID: e.aggregate, Sequence: e.seq, OccurredAt: e.created, Payload: e.payload}
		perr := m.publish(ctx, pub, msg)
		if m.batchAck && errors.Is(perr, context.DeadlineExceeded) {
			for _, rest := range evs[k:] { // "the batch is done": the bug
				if err := m.markPublished(ctx, tx, rest.id); err != nil {
					return 0, err
				}
			}
			break
		}
		if perr == nil {
			err = m.markPublished(ctx, tx, e.id)
		} else {
			n := e.attempts + 1
			status := "FAILED"
			if n >= m.env.MaxAttempts {
				status = "DEAD"
			}
			err = m.call(ctx, func(c context.Context) error {
				_, err := tx.Exec(c, `UPDATE outbox_events SET status = $2, attempts = $3, available_at = $4, last_error = $5 WHERE id = $1`,
					e.id, status, n, time.Now().Add(m.MinBackoff(n)), perr.Error())
				return err
			})
		}
		if err != nil {
			return 0, err
		}
	}
	return len(evs), m.call(ctx, tx.Commit)
}

// publish publishes msg, within the ack deadline when the relay is
// bounded.
func (m lockHeld) publish(ctx context.Context, pub harness.Publisher, msg harness.Message) error {
	if !m.bounded {
		return pub.Publish(ctx, msg)
	}
	pctx, cancel := context.WithTimeout(ctx, m.opts.AckDeadline)
	defer cancel()
	return pub.Publish(pctx, msg)
}

func (m lockHeld) markPublished(ctx context.Context, tx pgx.Tx, id string) error {
	return m.call(ctx, func(c context.Context) error {
		_, err := tx.Exec(c, `UPDATE outbox_events SET status = 'PUBLISHED', published_at = $2 WHERE id = $1`, id, time.Now())
		return err
	})
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
