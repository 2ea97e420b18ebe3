package loopcheck_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/impl"
	"github.com/outboxcheck/outboxcheck/internal/leakcheck"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// sqlRef is the reference loop with its producer's two INSERTs written on
// the harness's *sql.Tx instead of a pgx.Tx, handed over through
// loopcheck.SQL. Its bugs, one at a time: outside writes the outbox row
// in a transaction of its own (committed even when the business
// transaction rolls back); drop writes none.
type sqlRef struct {
	*refloop.Subject
	outside *sql.DB
	drop    bool
	calls   *atomic.Int64
}

func newSQLRef(outside, drop bool, calls *atomic.Int64) loopcheck.NewSubject {
	return loopcheck.SQL(func(ctx context.Context, env loopcheck.Env) (loopcheck.SQLSubject, error) {
		s, err := refloop.Build(ctx, env, refloop.Options{})
		if s == nil {
			return nil, err
		}
		r := &sqlRef{Subject: s, drop: drop, calls: calls}
		if outside && err == nil {
			r.outside, err = sql.Open("pgx", env.ConnString(harness.Actor{Role: harness.Producer}))
		}
		return r, err
	})
}

func (s *sqlRef) EnqueueSQL(ctx context.Context, tx *sql.Tx, p harness.Payment) error {
	s.calls.Add(1)
	if _, err := tx.ExecContext(ctx, `INSERT INTO payments (id, merchant_id, amount_cents, created_at) VALUES ($1, $2, $3, now())`,
		p.ID, p.MerchantID, p.AmountCents); err != nil {
		return err
	}
	if s.drop {
		return nil
	}
	payload, err := json.Marshal(impl.Payment{ID: p.ID, MerchantID: p.MerchantID, AmountCents: p.AmountCents})
	if err != nil {
		return err
	}
	var db interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	} = tx
	if s.outside != nil {
		db = s.outside
	}
	_, err = db.ExecContext(ctx, `INSERT INTO outbox_events (id, aggregate_id, event_type, sequence, payload, status, available_at, created_at)
		VALUES (gen_random_uuid(), $1, $2, 1, $3, 'PENDING', now(), now())`, p.ID, impl.EventTypePaymentSucceeded, payload)
	return err
}

func (s *sqlRef) Close() error {
	var err error
	if s.outside != nil {
		err = s.outside.Close()
	}
	return errors.Join(err, s.Subject.Close())
}

// A database/sql subject runs on the harness's *sql.Tx under drawn
// schedules (the producer's link partitioned, lost COMMIT replies among
// them) and passes; the harness called EnqueueSQL, and nothing it opened
// outlives the run: no goroutine, no session on the producer's link.
func TestSQLTxSubjectPasses(t *testing.T) {
	db := pgscratch.NewDatabase(t)
	defer leakcheck.Start(t, goleak.IgnoreAnyFunction("github.com/outboxcheck/outboxcheck/internal/pinned.Start.func1"))()
	restore := harness.Budget{Checks: 15, Seed: 5, ShrinkTime: time.Second}.Apply()
	defer restore()
	var calls atomic.Int64
	rec := harness.NewRecorder(t.Name(), nil)
	res := loopcheck.Run(rec, newSQLRef(false, false, &calls), loopcheck.Options{DatabaseURL: db.URL})
	if res.Failure != nil || rec.Failed() {
		t.Fatalf("the reference on *sql.Tx failed:\n%s\n%s", res.Story(), rec.Output())
	}
	if calls.Load() == 0 {
		t.Fatal("the harness never called EnqueueSQL")
	}
	t.Logf("%d EnqueueSQL calls; %s", calls.Load(), res.Coverage())
	producerSessions(t, db.URL)
}

// A reply lost on the producer's link, after each of its first requests
// in turn, is no violation of a correct database/sql subject. Measured:
// k = 0–2 strike the connect, 3 the BEGIN, 4–7 the INSERTs, 8 the
// COMMIT (the payment committed, the producer saw "conn closed" and
// counted it maybe-committed), 9 and more the next payment's.
func TestSQLTxLostReplyOnProducerLink(t *testing.T) {
	opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Recovery: refloop.Recovery}
	var calls atomic.Int64
	for k := range 12 {
		s := loopcheck.Schedule{{Kind: "partition", Link: "producer", Fault: "lost-reply", After: k}, {Kind: "commit", N: 2},
			{Kind: "heal", Link: "producer"}, {Kind: "commit", N: 1}, {Kind: "pause", For: 100 * time.Millisecond}}
		n, f, err := loopcheck.Replay(newSQLRef(false, false, &calls), opts, s, "", 1)
		if err != nil {
			t.Fatalf("k=%d: %v", k, err)
		}
		if n != 0 {
			t.Fatalf("k=%d: a lost reply on the producer's link was judged a violation: %s\n%s", k, f.Message, f.History.Story())
		}
	}
}

// producerSessions fails t if a session of the producer's link is open
// 5 s after the run.
func producerSessions(t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	admin, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var n int
		if err := admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'outboxcheck-loop-producer'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d producer sessions still open after the run", n)
		}
	}
}

// The *sql.Tx is the business transaction, and the harness judges what
// was written on it: an outbox row written outside it publishes a rolled-
// back payment (no-phantom); an outbox row never written loses a
// committed one (no-loss).
func TestSQLTxBrokenEnqueueIsCaught(t *testing.T) {
	for _, c := range []struct {
		name          string
		outside, drop bool
		steps         loopcheck.Schedule
		property      string
	}{
		{"outside the transaction", true, false, loopcheck.Schedule{{Kind: "rollback", N: 1}, {Kind: "pause", For: 300 * time.Millisecond}}, "no-phantom"},
		{"dropped", false, true, loopcheck.Schedule{{Kind: "commit", N: 1}, {Kind: "pause", For: 300 * time.Millisecond}}, "no-loss"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int64
			opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Recovery: refloop.Recovery}
			n, f, err := loopcheck.Replay(newSQLRef(c.outside, c.drop, &calls), opts, c.steps, c.property, 2)
			if err != nil {
				t.Fatal(err)
			}
			if n != 2 {
				t.Fatalf("killed by %s %d of 2 times; last failure %+v", c.property, n, f)
			}
			t.Logf("%s: %s", f.Property, f.Message)
			// The same schedule passes on the correct subject.
			n, f, err = loopcheck.Replay(newSQLRef(false, false, &calls), opts, c.steps, "", 1)
			if err != nil || n != 0 {
				t.Fatalf("the correct subject failed the same schedule (%v): %+v", err, f)
			}
		})
	}
}
