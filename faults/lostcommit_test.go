package faults_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/impl"
	"github.com/outboxcheck/outboxcheck/internal/leakcheck"
	"github.com/outboxcheck/outboxcheck/model"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// through rewrites a database URL to go through addr.
func through(t *testing.T, dbURL, addr string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	return u.String()
}

// The trap of FIELD-NOTES, as a regression test: the reply to COMMIT is
// lost, pgx reports a closed connection that looks safe to retry, and yet
// the transaction committed. impl must call it indeterminate, the model
// must accept the committed row without a problem, and the event must
// still be delivered with exactly one effect.
func TestLostCommitReplyIsIndeterminateNotFailed(t *testing.T) {
	db := pgscratch.NewDatabase(t)
	defer leakcheck.Start(t)() // the shared cluster's goroutines predate the test
	ctx := context.Background()
	var sessions []*impl.Session // closed before the leak check (t.Cleanup runs after it)
	defer func() {
		for _, s := range sessions {
			s.Close(ctx)
		}
	}()
	tracked := func(u string) *impl.Session {
		s := open(t, u)
		sessions = append(sessions, s)
		return s
	}
	admin := tracked(db.URL)
	conn, err := admin.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := impl.Migrate(ctx, conn); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(db.URL)
	n := faults.NewNet(u.Host)
	addr, err := n.Link("producer")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		n.Close()
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			t.Errorf("proxy %s still listening after Close", addr)
		}
	}()

	// Find the request that is the COMMIT: let k requests through, then
	// lose every reply, for k = 0, 1, …, until the commit lands unseen.
	found := false
	for k := 0; k < 20 && !found; k++ {
		if err := impl.Reset(ctx, conn); err != nil {
			t.Fatal(err)
		}
		sess := tracked(through(t, db.URL, addr))
		producer := &impl.Producer{Session: sess, IDs: impl.IDFunc(func() string { return "00000000-0000-4000-8000-000000000001" })}
		if _, err := sess.Conn(ctx); err != nil { // connect before the fault: count only the transaction
			t.Fatal(err)
		}
		if err := n.Inject("producer", faults.Fault{Kind: faults.LostReply, After: k}); err != nil {
			t.Fatal(err)
		}
		callCtx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		id, err := producer.CreatePayment(callCtx, impl.Payment{ID: "p1", MerchantID: "m", AmountCents: 5}, t0)
		cancel()
		n.Heal("producer")
		if err := n.Cut("producer"); err != nil {
			t.Fatal(err)
		}
		rows := waitRows(t, admin)
		if err == nil || len(rows) == 0 {
			if err == nil {
				t.Fatalf("k=%d: commit through a lost-reply link reported success", k)
			}
			if impl.IsIndeterminate(err) {
				t.Logf("k=%d: %v (indeterminate, did not commit: fine)", k, err)
			}
			continue
		}
		found = true
		t.Logf("k=%d: COMMIT landed, client saw: %v (SafeToRetry=%v, ErrConnClosed=%v)",
			k, err, pgconn.SafeToRetry(err), errors.Is(err, pgconn.ErrConnClosed))
		if !pgconn.SafeToRetry(err) {
			t.Errorf("expected the trap: pgx calls a lost COMMIT reply safe to retry; got %v", err)
		}
		if !impl.IsIndeterminate(err) {
			t.Fatalf("the commit happened but impl called the failure definite: %v", err)
		}
		checkModelAcceptsIt(t, id, rows[0])
	}
	if !found {
		t.Fatal("no k made the COMMIT's reply the lost one: the fault does not reach the commit")
	}
	cov := n.Coverage()[faults.LostReply]
	if cov.Injected == 0 || cov.Struck == 0 || cov.Affected == 0 {
		t.Fatalf("coverage %+v: the lost-reply faults struck nothing", cov)
	}
}

// checkModelAcceptsIt: an unknown commit, then the row observed — no
// problem; then the event goes out and is consumed once.
func checkModelAcceptsIt(t *testing.T, id string, r impl.Row) {
	t.Helper()
	s, ps := model.Commit(model.New(t0, model.SeedSemantics()), "p1", id, model.Unknown)
	s, more := model.Observe(s, model.Observed{Rows: map[string]model.Row{r.ID: {ID: r.ID, AggregateID: r.AggregateID,
		Status: model.Pending, AvailableAt: r.AvailableAt, CreatedAt: r.CreatedAt}}}, false)
	if ps = append(ps, more...); len(ps) > 0 {
		t.Fatalf("false positive on a committed-but-unacknowledged commit: %v", ps)
	}
	s, ps = model.Claim(s, 1, []model.Claimed{{ID: r.ID, Attempts: 1, ClaimID: "k"}})
	s, more = model.Publish(s, r.ID, string(r.Payload))
	s, more2 := model.MarkPublished(s, r.ID, "k", true, model.Done)
	s = model.Deliver(model.Deliver(s, 0, model.Acked), 0, model.Acked)
	if ps = append(append(ps, more...), more2...); len(ps) > 0 || len(model.Liveness(s)) > 0 || s.Effects[r.ID] != 1 {
		t.Fatalf("problems %v, liveness %v, effects %d", ps, model.Liveness(s), s.Effects[r.ID])
	}
}

func open(t *testing.T, u string) *impl.Session {
	t.Helper()
	s, err := impl.NewSession(u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// waitRows reads the outbox once every session through the proxy is gone.
func waitRows(t *testing.T, admin *impl.Session) []impl.Row {
	t.Helper()
	ctx := context.Background()
	conn, err := admin.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions still open 5 s after the cut", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	rows, err := (&impl.Store{Session: admin, Queries: impl.DefaultQueries()}).Rows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
