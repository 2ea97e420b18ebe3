// Package pgtest is pgscratch for outboxcheck's own tests: the same
// shared server and fresh databases, with rapid's fail files off unless
// asked for (harness.NoFailFilesUnlessAsked).
package pgtest

import (
	"flag"
	"testing"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// Main runs the tests and then stops the shared server. Unless the
// command line names -rapid.nofailfile, rapid writes no fail files (see
// harness.NoFailFilesUnlessAsked).
func Main(m *testing.M) {
	flag.Parse()
	harness.NoFailFilesUnlessAsked()
	pgscratch.Main(m)
}

// Cluster returns the binary's shared server, starting it on first use.
func Cluster(tb testing.TB) *pgscratch.Server { tb.Helper(); return pgscratch.Shared(tb) }

// Database creates a fresh database for the test and drops it at cleanup.
func Database(tb testing.TB) *pgscratch.Database { tb.Helper(); return pgscratch.NewDatabase(tb) }
