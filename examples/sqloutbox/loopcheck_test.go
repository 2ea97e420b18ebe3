package sqloutbox_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/outboxcheck/outboxcheck/examples/sqloutbox"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// adapter puts sqloutbox behind outboxcheck's loop contract, on
// database/sql only: the harness hands EnqueueSQL a *sql.Tx it opened on
// the producer's link, and commits or rolls it back. This file is all a
// team writes to test their outbox this way.
type adapter struct {
	env   loopcheck.Env
	admin *sql.DB // Reset, Effects, DeadLetters, Pending: the operator's link
	cons  sqloutbox.Consumer
}

// newAdapter is the adapter with its declaration: sqloutbox counts an
// attempt only when a publish fails, so a message that crashes the relay
// publishing it is leased again for ever, never dead (crashloop_test.go
// shows crash-loop finding it). The adapter says so (CrashLooper, 0), and
// the report names crash-loop not applicable.
func newAdapter(ctx context.Context, env loopcheck.Env) (loopcheck.SQLSubject, error) {
	a, err := openAdapter(ctx, env)
	if a == nil {
		return nil, err
	}
	return crashLoops{a}, err
}

type crashLoops struct{ *adapter }

func (crashLoops) CrashLoopBound() time.Duration { return 0 }

func openAdapter(ctx context.Context, env loopcheck.Env) (*adapter, error) {
	a := &adapter{env: env}
	var err error
	if a.admin, err = sql.Open("pgx", env.ConnString(harness.Actor{Role: harness.Operator})); err != nil {
		return nil, err
	}
	if a.cons.DB, err = sql.Open("pgx", env.ConnString(harness.Actor{Role: harness.Consumer})); err != nil {
		return a, err
	}
	_, err = a.admin.ExecContext(ctx, sqloutbox.Schema)
	return a, err
}

func (a *adapter) Reset(ctx context.Context) error {
	_, err := a.admin.ExecContext(ctx, `TRUNCATE sqlo_payments, sqlo_messages, sqlo_dead_letters, sqlo_inbox, sqlo_credits`)
	return err
}

func (a *adapter) EnqueueSQL(ctx context.Context, tx *sql.Tx, p harness.Payment) error {
	return sqloutbox.RecordPayment(ctx, tx, sqloutbox.Payment{ID: p.ID, MerchantID: p.MerchantID, AmountCents: p.AmountCents})
}

// Dispatch runs one relay on dispatcher i's link, with the harness's
// short real-time settings: its lease, its backoff (capped at 16 times
// the base) and its MaxAttempts.
func (a *adapter) Dispatch(ctx context.Context, i int, pub harness.Publisher) error {
	db, err := sql.Open("pgx", a.env.ConnString(harness.Actor{Role: harness.Dispatcher, N: i}))
	if err != nil {
		return err
	}
	defer db.Close()
	r := sqloutbox.Relay{DB: db, Lease: a.env.Lease, Backoff: a.env.BackoffBase, MaxBackoff: 16 * a.env.BackoffBase,
		MaxAttempts: a.env.MaxAttempts, Poll: 20 * time.Millisecond, Timeout: 2 * time.Second,
		Publish: func(ctx context.Context, m sqloutbox.Message) error {
			return pub.Publish(ctx, harness.Message{ID: m.ID, Type: m.Topic, AggregateID: m.Key, Payload: m.Body})
		}}
	if err := r.Run(ctx); !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

func (a *adapter) Handle(ctx context.Context, m harness.Message) error {
	return a.cons.Credit(ctx, message(m))
}

// HandleAt lets the harness crash the consumer before its commit or
// after it, before the ack.
func (a *adapter) HandleAt(ctx context.Context, m harness.Message, fp harness.Failpoints) error {
	c := sqloutbox.Consumer{DB: a.cons.DB, Hook: func(point string) error { return fp(harness.Failpoint(point)) }}
	return c.Credit(ctx, message(m))
}

func message(m harness.Message) sqloutbox.Message {
	return sqloutbox.Message{ID: m.ID, Topic: m.Type, Key: m.AggregateID, Body: m.Payload}
}

func (a *adapter) Effects(ctx context.Context) (map[string]int, error) {
	rows, err := a.admin.QueryContext(ctx, `SELECT message_id::text, count(*) FROM sqlo_credits GROUP BY message_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		out[id] = n
	}
	return out, rows.Err()
}

// DeadLetters lists the payments whose messages sqloutbox gave up on:
// they are kept in its dead-letter table.
func (a *adapter) DeadLetters(ctx context.Context) ([]string, error) {
	return a.keys(ctx, `SELECT key FROM sqlo_dead_letters`)
}

// Pending lists the payments whose messages are still to send, leased
// ones included.
func (a *adapter) Pending(ctx context.Context) ([]string, error) {
	return a.keys(ctx, `SELECT key FROM sqlo_messages`)
}

func (a *adapter) keys(ctx context.Context, query string) ([]string, error) {
	rows, err := a.admin.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

func (a *adapter) Close() error {
	var err error
	if a.cons.DB != nil {
		err = a.cons.DB.Close()
	}
	return errors.Join(err, a.admin.Close())
}

// TestSQLOutboxThroughTheLoopContract: partitions of every link, the
// producer's *sql.Tx included, killed relays, broker outages and poison
// messages, consumer crashes, duplicate deliveries: nothing committed is
// lost (what sqloutbox gives up on is in its dead letters), nothing rolled
// back appears, every payment is credited exactly once. Scale it with
// -rapid.checks (300 passed; see docs/adapters.md).
func TestSQLOutboxThroughTheLoopContract(t *testing.T) {
	restore := harness.Budget{Checks: 10}.Apply()
	defer restore()
	loopcheck.Exercise(t, loopcheck.SQL(newAdapter), loopcheck.Options{})
}
