package pgprov

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The harness-owned server runs with PostgreSQL's own session timeouts
// (none), as a team's CI server does, and its report lists what it does
// set; the harness ends an actor's stuck session itself.
func TestOrdinarySettingsAndTerminate(t *testing.T) {
	if _, err := findBinaries(); err != nil {
		t.Skip("no local PostgreSQL binaries")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{NoDocker: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	db, err := c.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Drop(ctx)
	admin, err := connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for _, name := range []string{"idle_in_transaction_session_timeout", "client_connection_check_interval"} {
		var v string
		if err := admin.QueryRow(ctx, "SHOW "+name).Scan(&v); err != nil || v != "0" {
			t.Errorf("%s = %q (%v), want PostgreSQL's default 0", name, v, err)
		}
	}
	set, err := c.Settings(ctx)
	if err != nil || set["fsync"] != "off" || set["idle_in_transaction_session_timeout"] != "" {
		t.Errorf("settings %v (%v): want fsync=off and no session timeout", set, err)
	}
	t.Logf("server settings: %v", set)

	// A session idle in transaction holding a row lock, its client gone
	// quiet: TerminateSessions ends it, and the lock is free.
	if _, err := admin.Exec(ctx, `CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgx.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["application_name"] = "stuck-actor"
	stuck, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close(ctx)
	tx, err := stuck.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT * FROM t WHERE id = 1 FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	n, err := TerminateSessions(ctx, admin, "stuck-actor")
	if err != nil || n != 1 {
		t.Fatalf("terminated %d sessions (%v), want 1", n, err)
	}
	lctx, lcancel := context.WithTimeout(ctx, 5*time.Second)
	defer lcancel()
	var id int
	if err := admin.QueryRow(lctx, `SELECT id FROM t WHERE id = 1 FOR UPDATE NOWAIT`).Scan(&id); err != nil {
		// The backend may take a moment to exit: wait for the lock instead.
		if err := admin.QueryRow(lctx, `SELECT id FROM t WHERE id = 1 FOR UPDATE`).Scan(&id); err != nil {
			t.Fatalf("the lock is still held after the terminate: %v", err)
		}
	}
}
