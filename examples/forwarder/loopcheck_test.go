package forwarder_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outboxcheck/outboxcheck/examples/forwarder"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

func TestMain(m *testing.M) { pgscratch.Main(m) }

// adapter puts the forwarder behind outboxcheck's loop contract. This
// file is all a team writes to test their forwarder this way.
type adapter struct {
	env   loopcheck.Env
	admin *pgxpool.Pool // Reset, Effects, Pending: the operator's link
	cons  forwarder.Consumer
	// wrap, if set, stands between the forwarder and the broker: the
	// broken variant's one change.
	wrap func(harness.Publisher) func(context.Context, forwarder.Message) error
}

const group = "payments-to-broker"

func newAdapter(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	return build(ctx, env, nil)
}

func build(ctx context.Context, env loopcheck.Env, wrap func(harness.Publisher) func(context.Context, forwarder.Message) error) (loopcheck.Subject, error) {
	a := &adapter{env: env, wrap: wrap}
	var err error
	if a.admin, err = pgxpool.New(ctx, env.ConnString(harness.Actor{Role: harness.Operator})); err != nil {
		return nil, err
	}
	if a.cons.DB, err = pgxpool.New(ctx, env.ConnString(harness.Actor{Role: harness.Consumer})); err != nil {
		return a, err
	}
	_, err = a.admin.Exec(ctx, forwarder.Schema+forwarder.PaymentsSchema)
	return a, err
}

func (a *adapter) Reset(ctx context.Context) error {
	_, err := a.admin.Exec(ctx, `TRUNCATE fwd_messages, fwd_offsets, fwd_payments, fwd_inbox, fwd_credits`)
	return err
}

func (a *adapter) Enqueue(ctx context.Context, tx pgx.Tx, p harness.Payment) error {
	return forwarder.RecordPayment(ctx, tx, forwarder.Payment{ID: p.ID, MerchantID: p.MerchantID, AmountCents: p.AmountCents})
}

// relay is the forwarder with the harness's short real-time settings:
// its backoff (capped at 16 times the base) and a 20 ms poll. It has no
// lease (it holds the group's row lock) and no dead letters (it retries
// for ever), so env.Lease and env.MaxAttempts map onto nothing.
func (a *adapter) relay(db *pgxpool.Pool, pub harness.Publisher) *forwarder.Forwarder {
	f := &forwarder.Forwarder{DB: db, Group: group, Backoff: a.env.BackoffBase, MaxBackoff: 16 * a.env.BackoffBase,
		Batch: 10, Poll: 20 * time.Millisecond, Timeout: 2 * time.Second}
	if pub == nil {
		return f
	}
	f.Publish = func(ctx context.Context, m forwarder.Message) error {
		return pub.Publish(ctx, message(m))
	}
	if a.wrap != nil {
		f.Publish = a.wrap(pub)
	}
	return f
}

// Dispatch runs one forwarder on dispatcher i's link until ctx is done.
func (a *adapter) Dispatch(ctx context.Context, i int, pub harness.Publisher) error {
	db, err := pgxpool.New(ctx, a.env.ConnString(harness.Actor{Role: harness.Dispatcher, N: i}))
	if err != nil {
		return err
	}
	defer db.Close()
	if err := a.relay(db, pub).Run(ctx); !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// message is m as the harness's broker takes it: AggregateID must be
// the payment's id, which is m's key.
func message(m forwarder.Message) harness.Message {
	return harness.Message{ID: m.ID, Type: m.Topic, AggregateID: m.Key, Payload: m.Payload}
}

func (a *adapter) Handle(ctx context.Context, m harness.Message) error {
	return a.cons.Credit(ctx, forwarder.Message{ID: m.ID, Topic: m.Type, Key: m.AggregateID, Payload: m.Payload})
}

// HandleAt lets the harness crash the consumer before its commit, or
// after it and before the ack.
func (a *adapter) HandleAt(ctx context.Context, m harness.Message, fp harness.Failpoints) error {
	c := forwarder.Consumer{DB: a.cons.DB, Hook: func(point string) error { return fp(harness.Failpoint(point)) }}
	return c.Credit(ctx, forwarder.Message{ID: m.ID, Topic: m.Type, Key: m.AggregateID, Payload: m.Payload})
}

func (a *adapter) Effects(ctx context.Context) (map[string]int, error) {
	rows, err := a.admin.Query(ctx, `SELECT message_id::text, count(*) FROM fwd_credits GROUP BY message_id`)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	var id string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&id, &n}, func() error { out[id] = n; return nil })
	return out, err
}

// Pending lists the payments whose messages lie past the group's offset,
// the batch a forwarder holds right now included: not forwarded yet.
func (a *adapter) Pending(ctx context.Context) ([]string, error) {
	rows, err := a.admin.Query(ctx, `SELECT m.key FROM fwd_messages m
		LEFT JOIN fwd_offsets o ON o.consumer_group = $1
		WHERE (m.transaction_id, m.seq) > (coalesce(o.last_tx, '0'), coalesce(o.last_seq, 0))`, group)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// MinBackoff is the forwarder's own retry delay: it has no jitter, so
// the low end is the delay itself.
func (a *adapter) MinBackoff(failures int) time.Duration {
	return a.relay(nil, nil).RetryDelay(failures)
}

func (a *adapter) Close() error {
	if a.cons.DB != nil {
		a.cons.DB.Close()
	}
	a.admin.Close()
	return nil
}

// TestForwarderThroughTheLoopContract: partitions of every link, killed
// and stopped forwarders, broker outages, slow and lost acks, poison
// messages, consumer crashes, held transactions, wedges, duplicate
// deliveries: nothing committed is lost, nothing rolled back appears,
// every payment is credited exactly once, and retries keep the
// forwarder's backoff. Ten schedules by default; scale it with
// -rapid.checks (300 passed; see docs/adapters.md).
func TestForwarderThroughTheLoopContract(t *testing.T) {
	restore := harness.Budget{Checks: 10}.Apply()
	defer restore()
	res := loopcheck.Exercise(t, newAdapter, loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL})
	for _, what := range slices.Sorted(maps.Keys(res.NotApplicable)) {
		t.Logf("not applicable: %s: %s", what, res.NotApplicable[what])
	}
}

// ackBeforeBroker is the broken variant: the forwarder hands each
// message to an asynchronous producer and acks its offset without
// waiting for the broker's answer. A message the broker then refuses is
// behind the offset: never forwarded again.
func ackBeforeBroker(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	return build(ctx, env, func(pub harness.Publisher) func(context.Context, forwarder.Message) error {
		return func(ctx context.Context, m forwarder.Message) error {
			go pub.Publish(context.WithoutCancel(ctx), message(m)) // the bug: its answer is dropped
			return nil
		}
	})
}

// TestAckBeforeBrokerIsCaught: the broken variant loses the payment whose
// first publish the broker refuses, and no-loss says which; both times
// the schedule runs. The refusal is of the payment's first publish,
// however late the forwarder comes to it: a broker outage of 300 ms was
// over before a loaded machine's forwarder got there, once in two.
func TestAckBeforeBrokerIsCaught(t *testing.T) {
	s := loopcheck.Schedule{{Kind: "poison", N: 1, After: 1}, {Kind: "commit", N: 1},
		{Kind: "pause", For: 500 * time.Millisecond}}
	opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL}
	n, f, err := loopcheck.Replay(ackBeforeBroker, opts, s, "no-loss", 2)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("acking before the broker answered was caught by no-loss %d of 2 times; last failure: %+v", n, f)
	}
	t.Logf("%s\n%s", f.Message, f.History.Story())
	// The correct forwarder passes the same schedule.
	if n, f, err := loopcheck.Replay(newAdapter, opts, s, "", 1); err != nil || n != 0 {
		t.Fatalf("the forwarder failed the schedule its broken variant fails: %v %+v", err, f)
	}
}
