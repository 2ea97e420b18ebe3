package jobqueue_test

import (
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/examples/jobqueue"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/model"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// killed runs the queue with sql against sem (seed 1, up to 300 checks, no
// faults) and returns the failure it must end in, shrunk within
// shrinkRuns replays (a budget of replays: the same story on a loaded
// machine), and the check it was first found at. A pass fails t. It
// skips under -race: hundreds of shrink replays under the race detector
// take minutes; CI runs these tests on their own without it.
func killed(t *testing.T, sql jobqueue.Queries, sem model.Semantics, shrinkRuns int) (*harness.Failure, int) {
	t.Helper()
	if raceEnabled {
		t.Skip("shrink replays: go test -run 'BugsAreCaught|Wrongly|Undeclared' ./examples/jobqueue/")
	}
	restore := harness.Budget{Checks: 300, Seed: 1, ShrinkTime: 15 * time.Minute}.Apply() // a backstop
	defer restore()
	rec := harness.NewRecorder(t.Name(), nil)
	sum := stepcheck.Run(rec, newAdapter(sql), stepcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Semantics: sem, MaxShrinkRuns: shrinkRuns})
	f := sum.Failure
	if f == nil {
		t.Fatalf("passed %d checks\n%s", sum.Checks, rec.Output())
	}
	t.Logf("killed by %s at check %d, shrunk to %d steps:\n%s", f.Property, sum.First.Check, len(f.History.Entries), f.History.Story())
	return f, sum.First.Check
}
