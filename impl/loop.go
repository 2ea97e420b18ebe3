package impl

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// NotifyChannel is the channel the producer notifies when it enqueues.
const NotifyChannel = "outbox_events"

// Loop is the reference relay: it dispatches batches while there is work,
// then sleeps until the next attempt is due (GetNextOutboxAttemptAt), at
// most MaxIdle, or until Wake says the producer enqueued something. The
// notification only shortens the sleep; the scan never stops, because a
// notification can be lost (sent while nobody listened, or on a dead
// connection) and retries and expired leases are never notified.
type Loop struct {
	Dispatcher *Dispatcher
	Batch      int             // default 10
	MaxIdle    time.Duration   // longest sleep; default 1 s
	Wake       <-chan struct{} // optional: LISTEN/NOTIFY wake-ups
	// CallTimeout bounds each batch and each NextAttemptAt, so a dead
	// connection (a partition that drops packets) cannot hang the loop.
	// Default 2 s.
	CallTimeout time.Duration
	// Fixed makes MaxIdle a fixed cadence: the loop sleeps MaxIdle (or
	// until woken) and does not ask when the next attempt is due.
	Fixed bool
	// NoScan turns the loop into one that only wakes on notifications: a
	// bug (mutant notify-only), kept here because it is one switch.
	NoScan bool
	// Step, if set, replaces Dispatcher.DispatchBatch as one batch's work:
	// a variant's own batch (the loop mutants), with the same contract.
	Step func(ctx context.Context, limit int) (int, []error)
}

// Run dispatches until ctx is done.
func (l *Loop) Run(ctx context.Context) {
	batch := l.Batch
	if batch == 0 {
		batch = 10
	}
	maxIdle := l.MaxIdle
	if maxIdle == 0 {
		maxIdle = time.Second
	}
	callTimeout := l.CallTimeout
	if callTimeout == 0 {
		callTimeout = 2 * time.Second
	}
	for ctx.Err() == nil {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		step := l.Dispatcher.DispatchBatch
		if l.Step != nil {
			step = l.Step
		}
		n, _ := step(cctx, batch)
		cancel()
		if n == batch {
			continue // more may be due now
		}
		var timer <-chan time.Time
		var t *time.Timer
		if !l.NoScan && l.Fixed {
			t = time.NewTimer(maxIdle)
			timer = t.C
		} else if !l.NoScan {
			wait := maxIdle
			cctx, cancel := context.WithTimeout(ctx, callTimeout)
			next, ok, err := l.Dispatcher.NextAttemptAt(cctx)
			cancel()
			if err == nil && ok {
				wait = min(max(next.Sub(l.Dispatcher.Clock.Now()), time.Millisecond), maxIdle)
			} else if err != nil {
				wait = 50 * time.Millisecond // the database is unreachable: try again soon
			}
			t = time.NewTimer(wait)
			timer = t.C
		}
		select {
		case <-ctx.Done():
		case <-timer:
		case <-l.Wake:
		}
		if t != nil {
			t.Stop()
		}
	}
}

// Listen LISTENs on NotifyChannel over its own connection and signals wake
// (without blocking) on every notification, until ctx is done. A lost
// connection is reopened; notifications sent meanwhile are lost, which the
// loop's scan makes up for.
func Listen(ctx context.Context, connString string, wake chan<- struct{}) {
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		return
	}
	cfg.ConnectTimeout = ConnectTimeout
	for ctx.Err() == nil {
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err == nil {
			lctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
			_, err = conn.Exec(lctx, "LISTEN "+NotifyChannel)
			cancel()
			if err == nil {
				// The one call without a deadline: waiting is its job, and
				// a dead connection costs only wake-ups (the scan goes on).
				// ctx ends it.
				for {
					if _, err = conn.WaitForNotification(ctx); err != nil {
						break
					}
					select {
					case wake <- struct{}{}:
					default:
					}
				}
			}
			closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
			conn.Close(closeCtx)
			cancel()
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Notify tells listeners, when tx commits, that an event was enqueued.
func Notify(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, "SELECT pg_notify($1, '')", NotifyChannel)
	return err
}
