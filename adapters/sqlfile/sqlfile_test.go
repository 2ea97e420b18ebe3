package sqlfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/sqlfile"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/impl"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

func TestMain(m *testing.M) { harness.NoFailFilesUnlessAsked(); pgscratch.Main(m) }

func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// The seed's runtime.sql, verbatim, maps onto exactly the reference's
// queries.
func TestSeedQueriesAreTheReference(t *testing.T) {
	src, err := os.ReadFile("testdata/seed_runtime.sql")
	if err != nil {
		t.Fatal(err)
	}
	got, err := sqlfile.Queries("seed_runtime.sql", src)
	if err != nil {
		t.Fatal(err)
	}
	want := impl.DefaultQueries()
	for name, pair := range map[string][2]string{
		"claim": {got.Claim, want.Claim}, "next": {got.NextAttemptAt, want.NextAttemptAt},
		"published": {got.MarkPublished, want.MarkPublished}, "failed": {got.MarkFailed, want.MarkFailed},
	} {
		if squash(pair[0]) != squash(pair[1]) {
			t.Errorf("%s:\n got %s\nwant %s", name, squash(pair[0]), squash(pair[1]))
		}
	}
}

func TestBadFilesAreNamed(t *testing.T) {
	seed, _ := os.ReadFile("testdata/seed_runtime.sql")
	cases := map[string]struct{ src, says string }{
		"missing query":     {strings.Replace(string(seed), "-- name: MarkOutboxEventFailed :execrows", "-- name: SomethingElse :execrows", 1), "required query MarkOutboxEventFailed is missing"},
		"malformed header":  {"-- name: ClaimOutboxEvents\nSELECT 1;", `q.sql:1: malformed query header`},
		"unknown kind":      {"-- name: X :sometimes\nSELECT 1;", "unknown kind :sometimes"},
		"unknown parameter": {strings.Replace(string(seed), "sqlc.arg(batch_limit)", "sqlc.arg(batch_size)", 1), `unknown parameter "batch_size"`},
		"wrong kind":        {strings.Replace(string(seed), "GetNextOutboxAttemptAt :one", "GetNextOutboxAttemptAt :many", 1), "query GetNextOutboxAttemptAt is :many, want :one"},
		"sql before header": {"SELECT 1;\n" + string(seed), "SQL before the first"},
		"defined twice":     {string(seed) + "\n-- name: ClaimOutboxEvents :many\nSELECT 1;", "defined twice"},
		"empty body":        {"-- name: ClaimOutboxEvents :many\n\n-- name: B :one\nSELECT 1;", "has no SQL"},
	}
	for name, c := range cases {
		if _, err := sqlfile.Queries("q.sql", []byte(c.src)); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: got %v, want an error saying %q", name, err, c.says)
		}
	}
}

// The seed's SQL passes, alone and with concurrent steps; each broken edit
// fails with the property that names its bug.
func TestSQLContract(t *testing.T) {
	cases := []struct {
		file, want string
		concurrent bool // with ClaimTogether and DeliverTogether
	}{
		{"seed_runtime.sql", "", false},
		{"seed_runtime.sql", "", true},
		{"broken_no_fence.sql", "fencing", false},
		{"broken_no_reclaim.sql", "no-loss", false},
		{"broken_ignores_available_at.sql", "backoff", false},
		{"broken_no_skip_locked.sql", "lease-exclusive", true},
	}
	for _, c := range cases {
		name := c.file
		if c.concurrent {
			name += "/concurrent"
		}
		t.Run(name, func(t *testing.T) {
			newSubject, err := sqlfile.New(filepath.Join("testdata", c.file), "")
			if err != nil {
				t.Fatal(err)
			}
			restore := harness.Budget{Checks: 200, Seed: 1, ShrinkTime: 5 * time.Second}.Apply()
			defer restore()
			rec := harness.NewRecorder(t.Name(), nil)
			sum := stepcheck.Run(rec, newSubject, stepcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Concurrent: c.concurrent})
			got := ""
			if f := sum.Failure; f != nil {
				if f.Infrastructure || f.Panic {
					t.Fatalf("%s", f.Message)
				}
				got = f.Property
			}
			if got != c.want {
				t.Fatalf("failed with %q, want %q:\n%s", got, c.want, rec.Output())
			}
			t.Logf("%d checks: %v", sum.Checks, sum.Failure != nil)
		})
	}
}
