package pgscratch_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

func TestMain(m *testing.M) { pgscratch.Main(m) }

var oneCommit = loopcheck.Schedule{{Kind: "commit", N: 1}, {Kind: "pause", For: 50 * time.Millisecond}}

// A test's database is a real, empty one of the harness's own: the loop
// contract replays on it, and it is gone after the test.
func TestNewDatabaseIsTheHarnesss(t *testing.T) {
	var name string
	t.Run("use", func(t *testing.T) {
		db := pgscratch.NewDatabase(t)
		name = db.Name
		n, f, err := loopcheck.Replay(refloop.New, loopcheck.Options{DatabaseURL: db.URL, Recovery: refloop.Recovery}, oneCommit, "", 1)
		if err != nil || n != 0 {
			t.Fatalf("the reference on a pgscratch database: %d failures (%v) %+v", n, err, f)
		}
	})
	conn := admin(t)
	var left int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&left); err != nil || left != 0 {
		t.Fatalf("database %s still there after its test (%v)", name, err)
	}
}

// Replay provisions by itself when given no database, and refuses one the
// harness did not make: every schedule deletes the subject's rows.
func TestReplayProvisionsAndRefusesForeignDatabases(t *testing.T) {
	if n, f, err := loopcheck.Replay(refloop.New, loopcheck.Options{Recovery: refloop.Recovery}, oneCommit, "", 1); err != nil || n != 0 {
		t.Fatalf("Replay with no DatabaseURL: %d failures (%v) %+v", n, err, f)
	}
	conn := admin(t)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "CREATE DATABASE someone_elses"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Exec(ctx, "DROP DATABASE someone_elses") })
	u := strings.Replace(pgscratch.Shared(t).URL(), "/postgres?", "/someone_elses?", 1)
	if !strings.Contains(u, "someone_elses") {
		t.Fatalf("cannot point %s at another database", pgscratch.Shared(t).URL())
	}
	_, _, err := loopcheck.Replay(refloop.New, loopcheck.Options{DatabaseURL: u}, oneCommit, "", 1)
	if !errors.Is(err, pgscratch.ErrNotOwned) {
		t.Fatalf("Replay on a foreign database: %v, want ErrNotOwned", err)
	}
}

func admin(t *testing.T) *pgx.Conn {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, pgscratch.Shared(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}
