package lockqueue_test

import (
	"strings"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/examples/lockqueue"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

func TestMain(m *testing.M) { pgscratch.Main(m) }

// The lock-held, deleting queue, every fault on, against what it
// declares: every property holds.
//
//	go test ./examples/lockqueue/ -run TestLockQueueThroughTheStepContract -rapid.checks=500
func TestLockQueueThroughTheStepContract(t *testing.T) {
	opts := stepcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Faults: true, Semantics: semantics()}
	if srv := pgscratch.Shared(t); srv.Owned() {
		opts.CrashDatabase = srv.Crash
	}
	stepcheck.Exercise(t, newAdapter(lockqueue.New(config)), opts)
}

// Three bugs of a lock-held queue, each killed by the property that
// names it: a take that commits its delete before the job ran (a crash
// before the publish, or a refused one, loses it), a failure that deletes
// the job instead of retrying it, and a take that locks nothing (two
// workers run the same job).
//
// It skips under -race (shrink replays; CI runs it on its own without).
func TestLockQueueBugsAreCaught(t *testing.T) {
	if raceEnabled {
		t.Skip("shrink replays: go test -run TestLockQueueBugsAreCaught ./examples/lockqueue/")
	}
	for _, c := range []struct {
		name     string
		edit     func(*lockqueue.Queue)
		property string
		detail   string
		maxSteps int
	}{
		{"commit before publish", func(q *lockqueue.Queue) {
			q.SQL.Take = `WITH due AS (
    SELECT id FROM lq_jobs WHERE run_at <= $1 AND attempts < max_attempts
    ORDER BY run_at, created_at LIMIT 1 FOR UPDATE SKIP LOCKED
)
DELETE FROM lq_jobs j USING due WHERE j.id = due.id
RETURNING j.id, j.aggregate_id, j.args::text, j.attempts, j.created_at`
			q.CommitOnTake = true
		}, "no-loss", "vanished", 4},
		{"delete without publishing", func(q *lockqueue.Queue) {
			q.SQL.Fail = `DELETE FROM lq_jobs WHERE id = $1 AND $2::timestamptz IS NOT NULL AND $3::text IS NOT NULL`
		}, "no-loss", "vanished", 10},
		{"take without a lock", func(q *lockqueue.Queue) {
			q.SQL.Take = strings.Replace(q.SQL.Take, "FOR UPDATE SKIP LOCKED", "", 1)
		}, "lease-exclusive", "holds its lock", 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := lockqueue.New(config)
			c.edit(q)
			restore := harness.Budget{Checks: 300, Seed: 1, ShrinkTime: 5 * time.Minute}.Apply() // a backstop
			defer restore()
			rec := harness.NewRecorder(t.Name(), nil)
			sum := stepcheck.Run(rec, newAdapter(q), stepcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Semantics: semantics(), MaxShrinkRuns: 300})
			f := sum.Failure
			if f == nil {
				t.Fatalf("passed %d checks\n%s", sum.Checks, rec.Output())
			}
			t.Logf("killed by %s at check %d, shrunk to %d steps:\n%s", f.Property, sum.First.Check, len(f.History.Entries), f.History.Story())
			if f.Property != c.property || !strings.Contains(f.Message, c.detail) {
				t.Errorf("want %s (%q), got %s: %s", c.property, c.detail, f.Property, f.Message)
			}
			// A replay budget, not time: the same story on a loaded machine.
			// Longer means shrink replays met an earlier one's open
			// transactions (the harness ends them before each Reset).
			if n := len(f.History.Entries); n > c.maxSteps {
				t.Errorf("shrunk to %d steps, want at most %d", n, c.maxSteps)
			}
		})
	}
}
