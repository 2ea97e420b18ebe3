package pgscratch

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ownedDatabase starts a harness-owned local cluster and returns a
// connection to a fresh database on it, all removed at cleanup.
func ownedDatabase(t *testing.T) (*Server, *Database, *pgx.Conn) {
	t.Helper()
	if _, err := findBinaries(); err != nil {
		t.Skip("no local PostgreSQL binaries")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{NoDocker: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	isolateOwnerKey(t)
	db, err := c.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeConn(conn) })
	return c, db, conn
}

// The harness-owned server runs with PostgreSQL's own session timeouts
// (none), as a team's CI server does, and its settings say what it does
// set differently.
func TestOwnedClusterHasDefaultSessionTimeouts(t *testing.T) {
	c, _, conn := ownedDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, name := range []string{"idle_in_transaction_session_timeout", "client_connection_check_interval"} {
		var v string
		if err := conn.QueryRow(ctx, "SHOW "+name).Scan(&v); err != nil || v != "0" {
			t.Errorf("%s = %q (%v), want PostgreSQL's default 0", name, v, err)
		}
	}
	set, err := c.Settings(ctx)
	if err != nil || set["fsync"] != "off" || set["full_page_writes"] != "off" {
		t.Fatalf("cluster settings %v (%v): want fsync=off, full_page_writes=off", set, err)
	}
	if _, ok := set["application_name"]; ok {
		t.Errorf("a session's own setting is listed: %v", set)
	}
	t.Logf("server settings: %v", set)
	own, err := ServerSettings(ctx, conn)
	if err != nil || own["fsync"] != "off" || own["max_connections"] != "200" {
		t.Errorf("ServerSettings %v (%v)", own, err)
	}
	if recordable("primary_conninfo", "password=x") == "password=x" || recordable("archive_command", "") != "" {
		t.Error("a setting that may hold a secret is recorded as it is")
	}
}

// A session idle in transaction holding a row lock: TerminateSessions
// ends it, not the caller's own, and another session then takes the lock.
func TestTerminateSessionsFreesRowLock(t *testing.T) {
	_, db, conn := ownedDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := conn.Exec(ctx, `CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	stuck, err := connect(ctx, db.URL+"&application_name=stuck-actor")
	if err != nil {
		t.Fatal(err)
	}
	defer closeConn(stuck)
	tx, err := stuck.Begin(ctx)
	if err == nil {
		_, err = tx.Exec(ctx, `SELECT id FROM t WHERE id = 1 FOR UPDATE`)
	}
	if err != nil {
		t.Fatal(err)
	}
	if n, err := TerminateSessions(ctx, conn, "stuck-actor"); err != nil || n != 1 {
		t.Fatalf("terminated %d sessions (%v), want 1", n, err)
	}
	lctx, lcancel := context.WithTimeout(ctx, 5*time.Second)
	defer lcancel()
	var id int
	if err := conn.QueryRow(lctx, `SELECT id FROM t WHERE id = 1 FOR UPDATE`).Scan(&id); err != nil {
		t.Fatalf("the row lock is still held after the terminate: %v", err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1"); err == nil {
		t.Error("the terminated session still answers")
	}
}
