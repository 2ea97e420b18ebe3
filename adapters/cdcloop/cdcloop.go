// Package cdcloop is the seed's third way to relay an outbox: change data
// capture. The producer and the consumer are the reference's (impl); the
// relay reads the outbox table's inserts from the write-ahead log through
// logical replication (pgoutput, a publication and a slot of its own),
// publishes each committed event, and confirms a position to the slot
// only once the broker accepted everything up to it. A relay that
// restarts (killed, cut off, the database crashed) resumes from the
// slot's confirmed position, so what committed while it was down is read
// then; what it published but had not confirmed is published again, and
// the inbox makes that harmless.
//
// It needs a server with wal_level=logical (ServerSettings): the
// harness's own cluster starts so when asked (pgscratch.Options.Settings),
// a server given by URL must already.
//
// Only one relay reads a slot at a time: the others wait for it, and take
// over when its session ends (the harness ends a killed relay's
// sessions). Attempts are counted in a table before each publish, so an
// event that kills its relay mid-publish still ends dead after
// MaxAttempts.
package cdcloop

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/impl"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// ServerSettings are what the relay needs of the server.
var ServerSettings = []string{"wal_level=logical"}

// Recovery is what the relay declares as its recovery time
// (loopcheck.Options.Recovery): a relay waiting for the slot looks every
// 100 ms, connects and starts streaming within a call timeout (2 s), and
// waits out the backoff of the event at the head (16 × 20 ms at most).
const Recovery = 3 * time.Second

// callTimeout bounds each database call and each publish.
const callTimeout = 2 * time.Second

// Options choose the variant: each field set is a bug (mutants.go).
type Options struct {
	// FromCurrent starts streaming at the server's current WAL position
	// instead of the slot's confirmed one.
	FromCurrent bool
	// ConfirmOnReceipt confirms a transaction's position as soon as it is
	// read, before its events are published.
	ConfirmOnReceipt bool
	// ConfirmWhole confirms a transaction's position when its first event
	// was accepted, though later ones failed.
	ConfirmWhole bool
	// LateSlot creates the slot when a relay first starts, not with the
	// schema: what committed before is not in it.
	LateSlot bool
	// TemporarySlot streams from a temporary slot the streaming relay
	// creates on its connection, gone with it (one name, so one relay
	// streams at a time, as with the reference's slot).
	TemporarySlot bool
	// KeepaliveConfirms answers the server's keepalives with the WAL end
	// they carry, whatever is read and not yet published.
	KeepaliveConfirms bool
	// StrictColumns refuses to decode a row with a column it does not
	// know: a column added by a migration stops the relay.
	StrictColumns bool
}

// Subject is the CDC relay behind the loop contract.
type Subject struct {
	env      loopcheck.Env
	opts     Options
	ids      impl.SequentialIDs
	producer impl.Producer
	consumer *impl.Consumer
	admin    *impl.Session
	slot     string
}

// New is the CDC relay.
func New(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	return Build(ctx, env, Options{})
}

// Build builds the subject with opts, creates its schema, its publication
// and (unless opts.LateSlot) its slot.
func Build(ctx context.Context, env loopcheck.Env, opts Options) (*Subject, error) {
	s := &Subject{env: env, opts: opts}
	s.producer = impl.Producer{IDs: &s.ids}
	cons, err := impl.NewSession(env.ConnString(harness.Actor{Role: harness.Consumer}))
	if err != nil {
		return nil, err
	}
	s.consumer = &impl.Consumer{Session: cons}
	if s.admin, err = impl.NewSession(env.ConnString(harness.Actor{Role: harness.Operator})); err != nil {
		return s, err
	}
	conn, err := s.admin.Conn(ctx)
	if err != nil {
		return s, err
	}
	if err := impl.Migrate(ctx, conn); err != nil {
		return s, err
	}
	if err := checkLogical(ctx, conn); err != nil {
		return s, err
	}
	var db string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil {
		return s, err
	}
	s.slot = slotName(db)
	if _, err := conn.Exec(ctx, schema); err != nil {
		return s, fmt.Errorf("cdc schema: %w", err)
	}
	return s, s.newSlot(ctx)
}

// schema is the relay's own: its publication, its attempt counts and its
// dead letters.
const schema = `
DO $$ BEGIN
	IF NOT EXISTS (SELECT FROM pg_publication WHERE pubname = 'outboxcheck_cdc') THEN
		CREATE PUBLICATION outboxcheck_cdc FOR TABLE outbox_events WITH (publish = 'insert');
	END IF;
END $$;
CREATE TABLE IF NOT EXISTS cdc_attempts (event_id uuid PRIMARY KEY, attempts integer NOT NULL);
CREATE TABLE IF NOT EXISTS cdc_dead_letters (event_id uuid PRIMARY KEY, aggregate_id text NOT NULL, last_error text NOT NULL);`

// checkLogical says clearly when the server cannot decode its log.
func checkLogical(ctx context.Context, conn *pgx.Conn) error {
	var level string
	if err := conn.QueryRow(ctx, "SHOW wal_level").Scan(&level); err != nil {
		return err
	}
	if level != "logical" {
		return fmt.Errorf("the CDC relay needs a server with wal_level=logical; this one runs with wal_level=%s", level)
	}
	return nil
}

// Reset empties the tables and starts the slot afresh, after them: no
// relay is running.
func (s *Subject) Reset(ctx context.Context) error {
	conn, err := s.admin.Conn(ctx)
	if err != nil {
		return err
	}
	if err := impl.Reset(ctx, conn); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "DELETE FROM cdc_attempts; DELETE FROM cdc_dead_letters"); err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	if err := undoSchemaChanges(ctx, conn); err != nil {
		return err
	}
	return s.restartSlot(ctx)
}

// newSlot creates the slot, unless the variant creates it late (or each
// relay its own).
func (s *Subject) newSlot(ctx context.Context) error {
	if s.opts.LateSlot || s.opts.TemporarySlot {
		return nil
	}
	return s.createSlot(ctx)
}

func (s *Subject) Enqueue(ctx context.Context, tx pgx.Tx, p harness.Payment) error {
	_, err := s.producer.Write(ctx, tx, impl.Payment{ID: p.ID, MerchantID: p.MerchantID, AmountCents: p.AmountCents}, time.Now())
	return err
}

func (s *Subject) Handle(ctx context.Context, m harness.Message) error {
	return s.consumer.Handle(ctx, impl.Message(m), nil)
}

// HandleAt is Handle with the harness's failpoints (the reference
// consumer's).
func (s *Subject) HandleAt(ctx context.Context, m harness.Message, fp harness.Failpoints) error {
	return s.consumer.Handle(ctx, impl.Message(m), func(p impl.Failpoint) error { return fp(harness.Failpoint(p)) })
}

func (s *Subject) Effects(ctx context.Context) (map[string]int, error) {
	fx, err := (&impl.Consumer{Session: s.admin}).Effects(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, e := range fx {
		out[e.EventID]++
	}
	return maps.Clone(out), nil
}

// DeadLetters lists the payments whose events the relay gave up on.
func (s *Subject) DeadLetters(ctx context.Context) ([]string, error) {
	conn, err := s.admin.Conn(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := conn.Query(ctx, "SELECT aggregate_id FROM cdc_dead_letters")
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// MinBackoff is the relay's backoff (loopcheck.Backoffer): before an
// event's attempt after k begun, it waits BackoffBase × 2^min(k-1, 4).
func (s *Subject) MinBackoff(failures int) time.Duration {
	return backoff(s.env.BackoffBase, failures)
}

func backoff(base time.Duration, failures int) time.Duration {
	return base * time.Duration(int64(1)<<min(max(failures-1, 0), 4))
}

// Deadlines are the relay's own (loopcheck.Deadliner): its call timeout,
// which bounds each publish.
func (s *Subject) Deadlines() []time.Duration { return []time.Duration{callTimeout} }

// Close drops the slot (a slot left behind keeps the server's WAL for
// ever) and ends the sessions.
func (s *Subject) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var errs []error
	if s.slot != "" {
		errs = append(errs, s.dropSlot(ctx))
	}
	if s.consumer != nil {
		errs = append(errs, s.consumer.Session.Close(ctx))
	}
	if s.admin != nil {
		errs = append(errs, s.admin.Close(ctx))
	}
	return errors.Join(errs...)
}
