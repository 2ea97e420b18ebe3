package stepcheck_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// TestReference runs the reference implementation through the state
// machine: every safety property after every action, liveness after the
// drain. -rapid.checks and -rapid.steps scale it.
func TestReference(t *testing.T) {
	db := pgscratch.NewDatabase(t)
	stepcheck.Exercise(t, reference.New, stepcheck.Options{DatabaseURL: db.URL})
}

// A database the tool did not create is never touched: every check deletes
// rows, so a URL that points at real data must be refused.
func TestRefusesForeignDatabase(t *testing.T) {
	db := pgscratch.NewDatabase(t)
	conn, err := pgx.Connect(context.Background(), db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var mark string
	if err := conn.QueryRow(context.Background(), "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1", db.Name).Scan(&mark); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(context.Background(), "COMMENT ON DATABASE "+db.Name+" IS NULL"); err != nil {
		t.Fatal(err)
	}
	c := harness.NewRecorder(t.Name(), nil)
	sum := stepcheck.Run(c, reference.New, stepcheck.Options{DatabaseURL: db.URL})
	// Give the mark back so the test's cleanup may drop the database.
	if _, err := conn.Exec(context.Background(), "COMMENT ON DATABASE "+db.Name+" IS '"+mark+"'"); err != nil {
		t.Fatal(err)
	}
	if !c.Failed() || !strings.Contains(c.Output(), "not created by this outboxcheck run") {
		t.Fatalf("ran in a foreign database; output:\n%s", c.Output())
	}
	if f := sum.Failure; f == nil || !f.Infrastructure || sum.Checks != 0 {
		t.Fatalf("want an infrastructure failure before any check, got %+v after %d checks", f, sum.Checks)
	}
}

// With no DatabaseURL a run finds PostgreSQL itself, and leaves no
// database of its own behind.
func TestRunProvisionsItsOwnDatabase(t *testing.T) {
	setFlag(t, "rapid.checks", "5")
	sum := stepcheck.Exercise(t, reference.New, stepcheck.Options{})
	if sum.Checks != 5 || sum.Failure != nil {
		t.Fatalf("summary %+v", sum)
	}
}

// With Concurrent the reference passes too, fault-free and under faults,
// and the concurrent actions really ran: both dispatchers came back with
// rows, and both consumers acknowledged one message, in some of the steps.
// (That the gate makes them overlap is shown by the mutants they kill:
// TestKillMatrix.)
func TestReferenceConcurrent(t *testing.T) {
	t.Run("fault-free", func(t *testing.T) {
		counts := concurrentSteps(t, stepcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Concurrent: true})
		for _, name := range []string{"both claimed", "both acknowledged"} {
			if counts[name] == 0 {
				t.Errorf("no step where %s", name)
			}
		}
	})
	t.Run("faults", func(t *testing.T) {
		opts := faultOptions(t)
		opts.Concurrent = true
		concurrentSteps(t, opts)
	})
}

// concurrentSteps runs the reference and counts the concurrent steps in
// which both calls succeeded with something to show.
func concurrentSteps(t *testing.T, opts stepcheck.Options) map[string]int {
	counts := map[string]int{}
	opts.OnCheck = func(h *harness.History) {
		for _, e := range h.Entries {
			parts := strings.Split(e.Result, "; ")
			switch {
			case e.Action == "ClaimTogether" && len(parts) == 2 &&
				!strings.Contains(e.Result, "claimed []") && !strings.Contains(e.Result, "error"):
				counts["both claimed"]++
			case e.Action == "DeliverTogether" && strings.Count(e.Result, "acknowledged") == 2:
				counts["both acknowledged"]++
			}
		}
	}
	stepcheck.Exercise(t, reference.New, opts)
	t.Logf("concurrent steps over the run: %v", counts)
	return counts
}
