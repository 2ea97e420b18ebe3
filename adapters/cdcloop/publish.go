package cdcloop

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/harness"
)

// flush publishes the transactions read, in commit order, and confirms
// each one's end once every event in it is accepted or dead: an event the
// broker refuses is tried again, after its backoff, until it is accepted
// or has had its attempts, and the transactions after it wait.
func (r *relay) flush(ctx context.Context, st *streamState) error {
	if r.s.opts.ConfirmWhole {
		return r.flushWhole(ctx, st)
	}
	for len(st.ready) > 0 {
		t := st.ready[0]
		if r.s.opts.ConfirmOnReceipt {
			if err := st.confirm(ctx, t.end); err != nil {
				return err
			}
		}
		for _, ev := range t.events {
			if err := r.deliver(ctx, st, ev); err != nil {
				return err
			}
		}
		st.ready = st.ready[1:]
		if err := st.confirm(ctx, t.end); err != nil {
			return err
		}
	}
	return nil
}

// deliver publishes ev until the broker accepts it, or dead-letters it
// once it has had its attempts. Each attempt is counted (committed) before
// it begins, so one that kills the relay counts too.
func (r *relay) deliver(ctx context.Context, st *streamState, ev harness.Message) error {
	last := "never published"
	for {
		n, err := r.countAttempt(ctx, ev.ID)
		if err != nil {
			return err
		}
		if n > r.s.env.MaxAttempts {
			return r.deadLetter(ctx, ev, last)
		}
		if n > 1 {
			if err := st.wait(ctx, backoff(r.s.env.BackoffBase, n-1)); err != nil {
				return err
			}
		}
		pctx, cancel := context.WithTimeout(ctx, callTimeout)
		err = r.pub.Publish(pctx, ev)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		last = err.Error()
	}
}

// wait sleeps d, keeping the server told of the position meanwhile.
func (st *streamState) wait(ctx context.Context, d time.Duration) error {
	end := time.Now().Add(d)
	for {
		if err := st.statusIfDue(ctx); err != nil {
			return err
		}
		left := time.Until(end)
		if left <= 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(left, statusEvery)):
		}
	}
}

// countAttempt counts one more attempt at event id and returns the count.
func (r *relay) countAttempt(ctx context.Context, id string) (int, error) {
	var n int
	err := r.onSide(ctx, func(ctx context.Context, c *pgx.Conn) error {
		return c.QueryRow(ctx, `INSERT INTO cdc_attempts (event_id, attempts) VALUES ($1, 1)
			ON CONFLICT (event_id) DO UPDATE SET attempts = cdc_attempts.attempts + 1 RETURNING attempts`, id).Scan(&n)
	})
	return n, err
}

// deadLetter gives up on ev, visibly.
func (r *relay) deadLetter(ctx context.Context, ev harness.Message, why string) error {
	return r.onSide(ctx, func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, `INSERT INTO cdc_dead_letters (event_id, aggregate_id, last_error) VALUES ($1, $2, $3)
			ON CONFLICT (event_id) DO NOTHING`, ev.ID, ev.AggregateID, why)
		return err
	})
}

// onSide runs fn on the relay's ordinary session (through its link),
// within a call timeout; a session that failed is closed, and the next
// call opens another.
func (r *relay) onSide(ctx context.Context, fn func(context.Context, *pgx.Conn) error) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if r.side == nil {
		c, err := pgx.Connect(ctx, r.s.env.ConnString(dispatcherActor(r.i)))
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		r.side = c
	}
	if err := fn(ctx, r.side); err != nil {
		r.closeSide()
		return err
	}
	return nil
}

func (r *relay) closeSide() {
	if r.side == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	r.side.Close(ctx)
	r.side = nil
}
