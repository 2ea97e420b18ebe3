// Package pgscratch provisions the PostgreSQL that outboxcheck runs on,
// and gives an adopter's own tests the same: a throwaway server, found or
// started in the harness's order ($OUTBOXCHECK_DATABASE_URL, a Docker
// daemon through testcontainers-go, the local server binaries), and a
// fresh database per test, made and marked as the harness's own so that
// the contracts' Exercise, Run and Replay accept it. It is ground floor:
// it imports nothing of outboxcheck's.
//
//	func TestMain(m *testing.M) { pgscratch.Main(m) }
//
//	func TestMyOutbox(t *testing.T) {
//		db := pgscratch.NewDatabase(t) // dropped at t's cleanup
//		pool, err := pgxpool.New(ctx, db.URL)
//		...
//	}
//
// Nothing it starts outlives the test binary: Main stops the server and
// removes its files, also on Ctrl-C. A database is dropped only when it
// is provably the harness's own (owner.go), whatever its name or comment.
package pgscratch

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"
)

var shared struct {
	opts   Options
	once   sync.Once
	server *Server
	err    error
}

// Main runs the tests, then stops the test binary's shared server (see
// Shared). Call it from TestMain.
func Main(m *testing.M) { MainWith(m, Options{}) }

// MainWith is Main with the shared server started with opts: e.g.
// Options{Settings: []string{"wal_level=logical"}} for a relay that reads
// the write-ahead log.
func MainWith(m *testing.M, opts Options) {
	shared.opts = opts
	code := m.Run()
	if shared.server != nil {
		if err := shared.server.Close(); err != nil {
			os.Stderr.WriteString("pgscratch: close server: " + err.Error() + "\n")
		}
	}
	os.Exit(code)
}

// Shared is the test binary's one server, started on first use; a
// failure to start it fails tb as an infrastructure error.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		shared.server, shared.err = Start(ctx, shared.opts)
	})
	if shared.err != nil {
		tb.Fatalf("infrastructure: %v", shared.err)
	}
	return shared.server
}

// NewDatabase makes a fresh database on the shared server for tb and
// drops it at tb's cleanup.
func NewDatabase(tb testing.TB) *Database {
	tb.Helper()
	db, err := Shared(tb).NewDatabase(context.Background())
	if err != nil {
		tb.Fatalf("infrastructure: %v", err)
	}
	tb.Cleanup(func() {
		if err := db.Drop(context.Background()); err != nil {
			tb.Errorf("drop %s: %v", db.Name, err)
		}
	})
	return db
}
