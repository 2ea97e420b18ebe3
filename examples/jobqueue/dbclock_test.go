package jobqueue_test

import (
	"strings"
	"testing"

	"github.com/outboxcheck/outboxcheck/examples/jobqueue"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// onTheDatabaseClock is the queue with its fetch and its rescuer reading
// the database's time, as many queues do, instead of the time passed in.
func onTheDatabaseClock() jobqueue.Queries {
	sql := jobqueue.DefaultQueries()
	sql.Fetch = strings.Replace(sql.Fetch, "scheduled_at < $1", "scheduled_at < now() AND $1::timestamptz IS NOT NULL", 1)
	sql.Rescue = strings.Replace(sql.Rescue, "lease_until < $1", "lease_until < clock_timestamp() AND $1::timestamptz IS NOT NULL", 1)
	return sql
}

// With the harness's clock in the database, a queue that reads now() is
// stepped like one that is given the time: every property holds. Without
// it, the same queue lives on the wall clock (2026-12, not the harness's
// 2026-01) and the model cannot follow it: the run fails, which is what
// shows the clock is really what the queue reads.
func TestJobQueueOnTheDatabaseClock(t *testing.T) {
	db := pgscratch.NewDatabase(t)
	setChecks(t, 60)
	stepcheck.Exercise(t, newAdapter(onTheDatabaseClock()),
		stepcheck.Options{DatabaseURL: db.URL, Faults: true, Semantics: semantics(config), DatabaseClock: true})

	wall := pgscratch.NewDatabase(t)
	rec := harness.NewRecorder(t.Name(), nil)
	sum := stepcheck.Run(rec, newAdapter(onTheDatabaseClock()), stepcheck.Options{DatabaseURL: wall.URL, Semantics: semantics(config)})
	if sum.Failure == nil || sum.Failure.Infrastructure {
		t.Fatalf("on the wall clock the queue passed: %+v", sum.Failure)
	}
	t.Logf("on the wall clock: %s: %s", sum.Failure.Property, sum.Failure.Message)
}

func setChecks(t *testing.T, n int) {
	t.Helper()
	restore := harness.Budget{Checks: n}.Apply()
	t.Cleanup(restore)
}
