// Package pgscratch gives an adopter's own tests what outboxcheck's tests
// use: a throwaway PostgreSQL, found or started in the harness's order
// ($OUTBOXCHECK_DATABASE_URL, a Docker daemon through testcontainers-go,
// the local server binaries), and a fresh database per test, made and
// marked as the harness's own so that properties.Exercise and
// loopcheck.Exercise, Run and Replay accept it.
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
// removes its files, also on Ctrl-C.
package pgscratch

import (
	"context"
	"testing"

	"github.com/outboxcheck/outboxcheck/internal/pgprov"
	"github.com/outboxcheck/outboxcheck/internal/pgtest"
)

// Server is a PostgreSQL server the harness found or started: its
// Source (url, docker, local), Version, URL() for its admin database,
// NewDatabase, Close.
type Server = pgprov.Cluster

// Database is one database made by the harness on a Server: Name, URL,
// Drop. Drop refuses a database the harness did not make.
type Database = pgprov.Database

// Options choose how Start finds a server: DatabaseURL (a server of
// yours), Image (the Docker image), NoDocker.
type Options = pgprov.Options

// Start finds or starts a server, in the harness's order. Close it when
// done: that stops what Start started and drops the databases it made.
func Start(ctx context.Context, opts Options) (*Server, error) { return pgprov.Start(ctx, opts) }

// Main runs the tests, then stops the test binary's shared server (see
// Shared). Call it from TestMain.
func Main(m *testing.M) { pgtest.Main(m) }

// Shared is the test binary's one server, started on first use; a
// failure to start it fails tb as an infrastructure error.
func Shared(tb testing.TB) *Server { return pgtest.Cluster(tb) }

// NewDatabase makes a fresh database on the shared server for tb and
// drops it at tb's cleanup.
func NewDatabase(tb testing.TB) *Database { return pgtest.Database(tb) }
