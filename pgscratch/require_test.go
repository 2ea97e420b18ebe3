package pgscratch_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// A server the harness starts runs with the settings asked for, and the
// report's list of settings shows them; a server given by URL that runs
// without them is refused with a configuration error naming each; a
// setting that is not name=value is refused before anything starts.
func TestServerSettingsAskedFor(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t.Setenv(pgscratch.EnvDatabaseURL, "")
	logical, err := pgscratch.Start(ctx, pgscratch.Options{NoDocker: true, Settings: []string{"wal_level=logical", "max_replication_slots=12"}})
	if err != nil {
		t.Fatal(err)
	}
	defer logical.Close()
	got, err := logical.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got["wal_level"] != "logical" || got["max_replication_slots"] != "12" {
		t.Fatalf("settings of a server started with wal_level=logical, max_replication_slots=12: %v", got)
	}
	// The same server by URL passes; the shared one (replica) does not.
	by, err := pgscratch.Start(ctx, pgscratch.Options{DatabaseURL: logical.URL(), Settings: []string{"wal_level=logical"}})
	if err != nil {
		t.Fatalf("a URL server that runs with what is asked: %v", err)
	}
	by.Close()
	_, err = pgscratch.Start(ctx, pgscratch.Options{DatabaseURL: pgscratch.Shared(t).URL(), Settings: []string{"wal_level=logical"}})
	if !errors.Is(err, pgscratch.ErrSettings) || !strings.Contains(err.Error(), `wal_level=logical (it runs with "replica")`) {
		t.Fatalf("a URL server without wal_level=logical: %v, want ErrSettings naming it", err)
	}
	for _, bad := range []string{"wal_level", "=logical", "wal level=logical", "wal_level= ", "wal_level=bogus", "no_such_setting=1"} {
		if _, err := pgscratch.Start(ctx, pgscratch.Options{NoDocker: true, Settings: []string{bad}}); !errors.Is(err, pgscratch.ErrSettings) {
			t.Errorf("setting %q: %v, want ErrSettings", bad, err)
		}
	}
}

// A database of the harness's own is dropped with the replication slots
// made in it (DROP DATABASE refuses while one exists: a CDC relay's run
// that died left it), the one streaming from it ended; a slot of another
// database is not touched.
func TestDropTakesTheDatabasesSlots(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t.Setenv(pgscratch.EnvDatabaseURL, "")
	c, err := pgscratch.Start(ctx, pgscratch.Options{NoDocker: true, Settings: []string{"wal_level=logical"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	db, err := c.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other, err := c.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Drop(ctx)
	in := func(d *pgscratch.Database) *pgx.Conn {
		conn, err := pgx.Connect(ctx, d.URL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(context.Background()) })
		return conn
	}
	for _, s := range []struct {
		d    *pgscratch.Database
		slot string
	}{{db, "mine_idle"}, {db, "mine_streaming"}, {other, "not_mine"}} {
		if _, err := in(s.d).Exec(ctx, "SELECT pg_create_logical_replication_slot($1, 'pgoutput')", s.slot); err != nil {
			t.Fatal(err)
		}
	}
	// A relay's walsender streaming from mine_streaming holds it active.
	cfg, err := pgconn.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["replication"] = "database"
	relay, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close(context.Background())
	if _, err := in(db).Exec(ctx, "CREATE PUBLICATION p FOR ALL TABLES"); err != nil {
		t.Fatal(err)
	}
	if err := pglogrepl.StartReplication(ctx, relay, "mine_streaming", 0, pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", "publication_names 'p'"}}); err != nil {
		t.Fatal(err)
	}
	var active bool
	if err := in(other).QueryRow(ctx, "SELECT active FROM pg_replication_slots WHERE slot_name = 'mine_streaming'").Scan(&active); err != nil || !active {
		t.Fatalf("mine_streaming active: %v (%v)", active, err)
	}
	if err := db.Drop(ctx); err != nil {
		t.Fatalf("drop a database with replication slots: %v", err)
	}
	conn := in(other)
	rows, err := conn.Query(ctx, "SELECT slot_name FROM pg_replication_slots ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	left, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(left, ",") != "not_mine" {
		t.Fatalf("slots after dropping the database: %v, want only not_mine", left)
	}
}
