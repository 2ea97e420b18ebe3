package simpleoutbox_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/examples/simpleoutbox"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// adapter puts simpleoutbox behind outboxcheck's loop contract. This file
// is all a team writes to test their outbox this way.
type adapter struct {
	env   loopcheck.Env
	mu    sync.Mutex
	admin *pgx.Conn // Reset and Effects: the operator's link
	cons  *pgx.Conn // the consumer's link, reopened after a fault
}

func newAdapter(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	a := &adapter{env: env}
	var err error
	if a.admin, err = pgx.Connect(ctx, env.ConnString(harness.Actor{Role: harness.Operator})); err != nil {
		return nil, err
	}
	_, err = a.admin.Exec(ctx, simpleoutbox.Schema)
	return a, err
}

func (a *adapter) Reset(ctx context.Context) error {
	_, err := a.admin.Exec(ctx, `TRUNCATE simple_orders, simple_outbox, simple_processed, simple_effects`)
	return err
}

func (a *adapter) Enqueue(ctx context.Context, tx pgx.Tx, p harness.Payment) error {
	return simpleoutbox.PlaceOrder(ctx, tx, simpleoutbox.Order{ID: p.ID, Amount: p.AmountCents})
}

func (a *adapter) Dispatch(ctx context.Context, i int, pub harness.Publisher) error {
	for ctx.Err() == nil { // a relay process that restarts when its connection dies
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		conn, err := pgx.Connect(cctx, a.env.ConnString(harness.Actor{Role: harness.Dispatcher, N: i}))
		cancel()
		if err == nil {
			r := simpleoutbox.Relay{Conn: conn, Publish: func(ctx context.Context, e simpleoutbox.Event) error {
				return pub.Publish(ctx, harness.Message{ID: e.ID, Type: "order.placed", AggregateID: e.AggregateID, Payload: e.Payload})
			}}
			err = r.Run(ctx)
			conn.PgConn().Conn().Close()
		}
		if errors.Is(err, context.Canceled) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

func (a *adapter) Handle(ctx context.Context, m harness.Message) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cons == nil || a.cons.IsClosed() {
		conn, err := pgx.Connect(ctx, a.env.ConnString(harness.Actor{Role: harness.Consumer}))
		if err != nil {
			return err
		}
		a.cons = conn
	}
	err := simpleoutbox.Consume(ctx, a.cons, simpleoutbox.Event{ID: m.ID, AggregateID: m.AggregateID, Payload: m.Payload})
	if err != nil {
		a.cons.PgConn().Conn().Close() // in doubt: start afresh
	}
	return err
}

func (a *adapter) Effects(ctx context.Context) (map[string]int, error) {
	rows, err := a.admin.Query(ctx, `SELECT event_id::text, count(*) FROM simple_effects GROUP BY event_id`)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	var id string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&id, &n}, func() error { out[id] = n; return nil })
	return out, err
}

// Pending lists the orders whose events are not sent yet, so that the
// harness can tell a late event from a lost one. simpleoutbox retries
// forever and has no dead letters, so the adapter implements no
// DeadLetters: the harness then keeps broker outages within the retry
// budget it hands out.
func (a *adapter) Pending(ctx context.Context) ([]string, error) {
	rows, err := a.admin.Query(ctx, `SELECT aggregate_id FROM simple_outbox WHERE sent_at IS NULL`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

func (a *adapter) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if a.cons != nil {
		a.cons.Close(ctx)
	}
	return a.admin.Close(ctx)
}

// TestSimpleOutboxThroughTheLoopContract: partitions, killed relays, a
// broker that goes down, duplicate deliveries; nothing committed is lost,
// nothing rolled back appears, every order takes effect exactly once.
func TestSimpleOutboxThroughTheLoopContract(t *testing.T) {
	restore := harness.Budget{Checks: 10}.Apply()
	defer restore()
	loopcheck.Exercise(t, newAdapter, loopcheck.Options{})
}
