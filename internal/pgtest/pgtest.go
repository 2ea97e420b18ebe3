// Package pgtest gives tests one PostgreSQL cluster per test binary and a
// fresh database per test. Use Main from TestMain so the cluster is stopped
// and its files removed when the binary ends.
package pgtest

import (
	"context"
	"flag"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/internal/pgprov"
)

var shared struct {
	once    sync.Once
	cluster *pgprov.Cluster
	err     error
}

// Main runs the tests and then stops the shared cluster. Unless the
// command line names -rapid.nofailfile, rapid writes no fail files (see
// noFailFiles).
func Main(m *testing.M) {
	flag.Parse()
	noFailFiles()
	code := m.Run()
	if shared.cluster != nil {
		if err := shared.cluster.Close(); err != nil {
			os.Stderr.WriteString("pgtest: close cluster: " + err.Error() + "\n")
		}
	}
	os.Exit(code)
}

// Cluster returns the binary's shared cluster, starting it on first use.
func Cluster(tb testing.TB) *pgprov.Cluster {
	tb.Helper()
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		shared.cluster, shared.err = pgprov.Start(ctx, pgprov.Options{})
	})
	if shared.err != nil {
		tb.Fatalf("infrastructure: %v", shared.err)
	}
	return shared.cluster
}

// Database creates a fresh database for the test and drops it at cleanup.
func Database(tb testing.TB) *pgprov.Database {
	tb.Helper()
	c := Cluster(tb)
	db, err := c.NewDatabase(context.Background())
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
