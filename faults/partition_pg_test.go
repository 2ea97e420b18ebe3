package faults_test

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/internal/leakcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// pgLink is a Net with one link, "actor", in front of the test's server.
func pgLink(t *testing.T, dbURL string) (*faults.Net, string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	n := faults.NewNet(u.Host)
	addr, err := n.Link("actor")
	if err != nil {
		n.Close()
		t.Fatal(err)
	}
	return n, addr
}

func connect(t *testing.T, connString string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, connString)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// exec runs sql on c in the background under timeout; the error arrives on
// the channel.
func exec(c *pgx.Conn, sql string, timeout time.Duration) <-chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_, err := c.Exec(ctx, sql)
		done <- err
	}()
	return done
}

// count returns how many rows of table t have id.
func count(t *testing.T, admin *pgx.Conn, id int) int {
	t.Helper()
	var k int
	if err := admin.QueryRow(context.Background(), `SELECT count(*) FROM t WHERE id = $1`, id).Scan(&k); err != nil {
		t.Fatal(err)
	}
	return k
}

// A query sent during a short partition is answered after the heal, on the
// same connection, which then goes on: a client without a deadline shorter
// than the partition never notices it.
func TestBlackholeHealAnswersHeldQuery(t *testing.T) {
	db := pgscratch.NewDatabase(t)
	defer leakcheck.Start(t)()
	n, addr := pgLink(t, db.URL)
	defer n.Close()
	c := connect(t, through(t, db.URL, addr))
	defer c.Close(context.Background())
	if err := n.Inject("actor", faults.Fault{Kind: faults.Blackhole}); err != nil {
		t.Fatal(err)
	}
	done := exec(c, "SELECT 1", 3*time.Second)
	select {
	case err := <-done:
		t.Fatalf("answered through a blackhole: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	n.Heal("actor")
	if err := <-done; err != nil {
		t.Fatalf("the query held by the partition got no answer after the heal: %v", err)
	}
	if err := <-exec(c, "SELECT 2", 2*time.Second); err != nil {
		t.Fatalf("the connection does not go on after the heal: %v", err)
	}
}

// An INSERT whose connection closed during the partition never commits;
// one held on another connection through the same partition commits at the
// heal.
func TestBlackholeClosedConnectionNeverCommits(t *testing.T) {
	db := pgscratch.NewDatabase(t)
	defer leakcheck.Start(t)()
	admin := connect(t, db.URL)
	defer admin.Close(context.Background())
	if _, err := admin.Exec(context.Background(), `CREATE TABLE t (id int)`); err != nil {
		t.Fatal(err)
	}
	n, addr := pgLink(t, db.URL)
	defer n.Close()
	gone, kept := connect(t, through(t, db.URL, addr)), connect(t, through(t, db.URL, addr))
	defer kept.Close(context.Background())
	if err := n.Inject("actor", faults.Fault{Kind: faults.Blackhole}); err != nil {
		t.Fatal(err)
	}
	keptDone := exec(kept, `INSERT INTO t VALUES (2)`, 5*time.Second)
	if err := <-exec(gone, `INSERT INTO t VALUES (1)`, 300*time.Millisecond); !pgconn.Timeout(err) {
		t.Fatalf("INSERT through a blackhole: %v, want a timeout", err)
	}
	// pgx would wait up to 15 s for the server to answer its Terminate
	// (which the partition holds too); the client dies first.
	_ = gone.PgConn().Conn().Close()
	select {
	case <-gone.PgConn().CleanupDone():
	case <-time.After(5 * time.Second):
		t.Fatal("pgx did not finish closing the connection")
	}
	time.Sleep(200 * time.Millisecond) // the proxy sees the close before the heal
	n.Heal("actor")
	if err := <-keptDone; err != nil {
		t.Fatalf("the INSERT held on the open connection failed after the heal: %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	if k := count(t, admin, 1); k != 0 {
		t.Fatalf("the INSERT of a connection closed during the partition committed (%d rows)", k)
	}
	if k := count(t, admin, 2); k != 1 {
		t.Fatalf("%d rows of the held INSERT, want 1", k)
	}
}

// At the heal of a long partition the connection it touched is closed and
// its held INSERT never reaches the server; a connection it did not touch
// goes on and a new one works.
func TestSeverHealEndsTouchedConnection(t *testing.T) {
	db := pgscratch.NewDatabase(t)
	defer leakcheck.Start(t)()
	admin := connect(t, db.URL)
	defer admin.Close(context.Background())
	if _, err := admin.Exec(context.Background(), `CREATE TABLE t (id int)`); err != nil {
		t.Fatal(err)
	}
	n, addr := pgLink(t, db.URL)
	defer n.Close()
	touched, idle := connect(t, through(t, db.URL, addr)), connect(t, through(t, db.URL, addr))
	defer touched.Close(context.Background())
	defer idle.Close(context.Background())
	if err := n.Inject("actor", faults.Fault{Kind: faults.Sever}); err != nil {
		t.Fatal(err)
	}
	done := exec(touched, `INSERT INTO t VALUES (1)`, 5*time.Second)
	time.Sleep(300 * time.Millisecond)
	healed := time.Now()
	n.Heal("actor")
	err := <-done
	if err == nil || errors.Is(err, context.DeadlineExceeded) || time.Since(healed) > 2*time.Second {
		t.Fatalf("touched connection %v after the heal: %v, want it closed at once", time.Since(healed), err)
	}
	if !touched.IsClosed() {
		t.Fatalf("the touched connection is still open (%v)", err)
	}
	if err := <-exec(idle, "SELECT 1", 2*time.Second); err != nil {
		t.Fatalf("a connection the partition did not touch was hurt: %v", err)
	}
	fresh := connect(t, through(t, db.URL, addr))
	defer fresh.Close(context.Background())
	time.Sleep(200 * time.Millisecond)
	if k := count(t, admin, 1); k != 0 {
		t.Fatalf("the severed connection's held INSERT committed (%d rows)", k)
	}
}
