package impl_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/impl"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// epoch is where every test's clock starts.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// clock is a manual clock: time moves only when a test advances it.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// broker records every publish; it acknowledges unless refuse is set.
type broker struct {
	mu     sync.Mutex
	log    []impl.Message
	refuse bool
}

func (b *broker) Publish(_ context.Context, m impl.Message) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.refuse {
		return fmt.Errorf("broker refused %s", m.ID)
	}
	b.log = append(b.log, m)
	return nil
}

func (b *broker) messages() []impl.Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.log)
}

// world is one database with a producer, dispatchers and a consumer, each on
// its own session.
type world struct {
	t        *testing.T
	ctx      context.Context
	url      string
	clock    *clock
	ids      *impl.SequentialIDs
	broker   *broker
	producer *impl.Producer
	consumer *impl.Consumer
	admin    *impl.Store
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	db := pgscratch.NewDatabase(t)
	w := &world{t: t, ctx: ctx, url: db.URL, clock: &clock{now: epoch}, ids: &impl.SequentialIDs{}, broker: &broker{}}
	w.admin = impl.NewStore(w.session())
	conn, err := w.admin.Session.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := impl.Migrate(ctx, conn); err != nil {
		t.Fatal(err)
	}
	w.producer = &impl.Producer{Session: w.session(), IDs: w.ids}
	w.consumer = &impl.Consumer{Session: w.session()}
	return w
}

func (w *world) session() *impl.Session {
	s, err := impl.NewSession(w.url)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// dispatcher is a fresh dispatcher process with its own session.
func (w *world) dispatcher() *impl.Dispatcher {
	return &impl.Dispatcher{Store: impl.NewStore(w.session()), Publisher: w.broker,
		Clock: w.clock, IDs: w.ids, Policy: impl.DefaultPolicy()}
}

func (w *world) pay(n int) string {
	w.t.Helper()
	id, err := w.producer.CreatePayment(w.ctx, payment(n), w.clock.Now())
	if err != nil {
		w.t.Fatal(err)
	}
	return id
}

func payment(n int) impl.Payment {
	return impl.Payment{ID: fmt.Sprintf("pay-%d", n), MerchantID: fmt.Sprintf("m-%d", n%3), AmountCents: int64(100 * n)}
}

func (w *world) row(id string) impl.Row {
	w.t.Helper()
	rows, err := w.admin.Rows(w.ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, r := range rows {
		if r.ID == id {
			return r
		}
	}
	w.t.Fatalf("no outbox row %s", id)
	return impl.Row{}
}

// deliverAll hands every broker message to the consumer, duplicates included.
func (w *world) deliverAll() {
	w.t.Helper()
	for _, m := range w.broker.messages() {
		if err := w.consumer.Handle(w.ctx, m, nil); err != nil {
			w.t.Fatal(err)
		}
	}
}

// effectsOf counts ledger credits per event_id.
func (w *world) effectsOf() map[string]int {
	w.t.Helper()
	effects, err := w.consumer.Effects(w.ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	n := map[string]int{}
	for _, e := range effects {
		n[e.EventID]++
	}
	return n
}

func (w *world) claimOne(d *impl.Dispatcher) impl.Claimed {
	w.t.Helper()
	got, err := d.Claim(w.ctx, 10)
	if err != nil {
		w.t.Fatal(err)
	}
	if len(got) != 1 {
		w.t.Fatalf("claimed %d events, want 1", len(got))
	}
	return got[0]
}

func (w *world) claimNone(d *impl.Dispatcher) {
	w.t.Helper()
	got, err := d.Claim(w.ctx, 10)
	if err != nil {
		w.t.Fatal(err)
	}
	if len(got) != 0 {
		w.t.Fatalf("claimed %d events at %v, want none", len(got), w.clock.Now())
	}
}
