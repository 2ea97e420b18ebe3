package loopcheck_test

import (
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// An interrupt mid-run abandons the schedule in progress unjudged, starts
// no other, and returns at once with Interrupted set: no failure, no
// infrastructure error, and the schedules counted are the ones that ran.
func TestInterruptStopsTheLoopRun(t *testing.T) {
	restore := harness.Budget{Checks: 1000, Seed: 2}.Apply()
	defer restore()
	stop := make(chan struct{})
	time.AfterFunc(4*time.Second, func() { close(stop) })
	start := time.Now()
	rec := harness.NewRecorder(t.Name(), nil)
	res := loopcheck.Run(rec, refloop.New, loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Interrupt: stop})
	took := time.Since(start)
	if !res.Interrupted || res.Failure != nil || rec.Failed() || res.Checks < 1 || res.Checks > 20 {
		t.Fatalf("interrupted %v, failure %v, recorder failed %v, %d schedules:\n%s", res.Interrupted, res.Failure, rec.Failed(), res.Checks, rec.Output())
	}
	t.Logf("stopped %v after the interrupt, %d schedules ran", (took - 4*time.Second).Round(time.Millisecond), res.Checks)
}
