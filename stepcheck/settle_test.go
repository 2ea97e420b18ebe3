package stepcheck

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// An actor cut while its statement waits on a row lock leaves a backend
// that does not notice its client is gone (a lock wait reads nothing from
// the socket). With no server-wide timeout to end it, settle ends it
// itself, well within settleTimeout.
func TestSettleEndsSessionWaitingOnLock(t *testing.T) {
	db := pgscratch.NewDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := newLinks(db.URL, true)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	h := &ownSession{url: db.URL}
	if err := h.reconnect(ctx); err != nil {
		t.Fatal(err)
	}
	defer h.close()
	if _, err := h.conn.Exec(ctx, "CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	holder := lockRow(t, ctx, db.URL)
	defer holder.Rollback(ctx)

	a := harness.Actor{Role: harness.Dispatcher}
	cs, err := l.connString(a)
	if err != nil {
		t.Fatal(err)
	}
	// The actor sends its UPDATE and nothing after: a client that vanished
	// (pgx itself would send a cancel request as it closes, through the
	// reopened link, and so hide the stuck session most of the time).
	actor, err := pgconn.Connect(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := actor.Hijack()
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Conn.Close()
	hc.Frontend.Send(&pgproto3.Query{String: "UPDATE t SET id = 1 WHERE id = 1"})
	if err := hc.Frontend.Flush(); err != nil {
		t.Fatal(err)
	}
	m := &machine{ctx: ctx, links: l, harness: h}
	waitFor(t, m, "wait_event_type = 'Lock' AND application_name = $1", appName(a))

	if err := l.net.Cut(a.String()); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := m.waitGone(appName(a)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > settleTimeout/2 {
		t.Errorf("settle took %v", d)
	}
}

// lockRow holds row 1 of t FOR UPDATE in a transaction of its own.
func lockRow(t *testing.T, ctx context.Context, url string) pgx.Tx {
	t.Helper()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	tx, err := conn.Begin(ctx)
	if err == nil {
		_, err = tx.Exec(ctx, "SELECT id FROM t WHERE id = 1 FOR UPDATE")
	}
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// waitFor polls until some session matches where.
func waitFor(t *testing.T, m *machine, where string, args ...any) {
	t.Helper()
	for {
		n, err := m.sessions(m.ctx, where, args...)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}
