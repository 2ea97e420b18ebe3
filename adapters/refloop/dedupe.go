package refloop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/outboxcheck/outboxcheck/impl"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// Dedupe is the reference loop leaning on the broker's deduplication to
// store each event once (loopcheck.Deduper), as relays do that publish
// with the event's id as JetStream's Nats-Msg-Id: it resends an event it
// is not sure of (a lost ack, an expired lease) only while the broker
// would drop the copy. Before its first send of an event it records
// when; once Env.DedupeWindow − Env.WireHold has passed since then, it
// gives up on the event (DEAD, visibly) instead of sending it again.
// Correct: it trades delivery for a stream that holds each event once.
// It needs a real broker (loopcheck.Options.JetStream, --jetstream).
func Dedupe(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	return newDeduping(ctx, env, true)
}

// DedupePastWindow is a loop mutant: the reference loop declaring that
// it leans on the broker's deduplication, yet resending an event
// whenever it comes due again, past the dedupe window too. An ack lost
// before an outage longer than the window has the stream store the
// event twice. dedupe-window kills it.
func DedupePastWindow(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	return newDeduping(ctx, env, false)
}

// firstSends records each event's first send.
const firstSends = `CREATE TABLE IF NOT EXISTS dedupe_first_sends (
	event_id text PRIMARY KEY,
	sent_at  timestamptz NOT NULL
)`

func newDeduping(ctx context.Context, env loopcheck.Env, inWindow bool) (loopcheck.Subject, error) {
	if env.DedupeWindow <= 0 {
		return nil, errors.New("the dedupe relay leans on the broker's deduplication: run it with a real broker (--jetstream)")
	}
	opts := Options{Notify: true}
	if inWindow {
		opts.Step = func(d *impl.Dispatcher) func(ctx context.Context, limit int) (int, []error) {
			return withinWindow(d, env.DedupeWindow-env.WireHold)
		}
	}
	s, err := Build(ctx, env, opts)
	if err != nil {
		return s, err
	}
	conn, err := s.admin.Conn(ctx)
	if err == nil {
		_, err = conn.Exec(ctx, firstSends)
	}
	return deduping{s}, err
}

type deduping struct{ *Subject }

func (deduping) LeansOnDedupe() bool { return true }

func (d deduping) Reset(ctx context.Context) error {
	if err := d.Subject.Reset(ctx); err != nil {
		return err
	}
	conn, err := d.admin.Conn(ctx)
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, `TRUNCATE dedupe_first_sends`)
	return err
}

// withinWindow is the reference batch that sends an event only within
// allowed of its first send, and makes it DEAD after.
func withinWindow(d *impl.Dispatcher, allowed time.Duration) func(ctx context.Context, limit int) (int, []error) {
	return func(ctx context.Context, limit int) (int, []error) {
		events, err := d.Claim(ctx, limit)
		if err != nil {
			return 0, []error{fmt.Errorf("claim outbox events: %w", err)}
		}
		var errs []error
		for _, ev := range events {
			first, err := firstSend(ctx, d.Store.Session, ev.ID)
			if err != nil { // not sent: its lease runs out, and it is claimed again
				errs = append(errs, fmt.Errorf("record first send of %s: %w", ev.ID, err))
				continue
			}
			if time.Since(first) > allowed {
				if _, err := d.Store.MarkFailed(ctx, ev.ID, ev.ClaimID, impl.StatusDead, time.Now().UTC(),
					"not sent again: past the broker's dedupe window, a copy could be stored twice"); err != nil {
					errs = append(errs, err)
				}
				continue
			}
			if err := d.Send(ctx, ev); err != nil {
				errs = append(errs, err)
			}
		}
		return len(events), errs
	}
}

// firstSend records now as event id's first send unless one is recorded,
// and returns the first.
func firstSend(ctx context.Context, s *impl.Session, id string) (time.Time, error) {
	conn, err := s.Conn(ctx)
	if err != nil {
		return time.Time{}, err
	}
	var at time.Time
	err = conn.QueryRow(ctx, `INSERT INTO dedupe_first_sends (event_id, sent_at) VALUES ($1, $2)
		ON CONFLICT (event_id) DO UPDATE SET sent_at = dedupe_first_sends.sent_at
		RETURNING sent_at`, id, time.Now()).Scan(&at)
	return at, err
}
