package loopcheck_test

import (
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/internal/pgtest"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/properties"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The reference relay loop, with LISTEN/NOTIFY wake-ups and two
// dispatchers, passes under partitions, kills and broker outages.
func TestReferenceLoop(t *testing.T) {
	restore := properties.Budget{Checks: 30, Seed: 7, ShrinkTime: time.Second}.Apply()
	defer restore()
	rec := properties.NewRecorder(t.Name(), nil)
	res := loopcheck.Run(rec, refloop.New, loopcheck.Options{DatabaseURL: pgtest.Database(t).URL, Quiesce: 10 * time.Second})
	if res.Failure != nil || rec.Failed() {
		t.Fatalf("the reference loop failed:\n%s", rec.Output())
	}
	if res.Checks != 30 {
		t.Fatalf("%d checks ran, want 30", res.Checks)
	}
}

// A relay that only wakes on notifications loses events whose retry or
// lease nobody notifies; the loop contract names it no-loss, and a replay
// of its schedule says how often that comes back.
func TestNotifyOnlyIsKilled(t *testing.T) {
	restore := properties.Budget{Checks: 20, Seed: 1, ShrinkTime: time.Second}.Apply()
	defer restore()
	opts := loopcheck.Options{DatabaseURL: pgtest.Database(t).URL, Quiesce: 3 * time.Second}
	rec := properties.NewRecorder(t.Name(), nil)
	res := loopcheck.Run(rec, refloop.NotifyOnly, opts)
	if res.Failure == nil || res.Failure.Property != "no-loss" {
		t.Fatalf("notify-only was not killed by no-loss: %+v\n%s", res.Failure, rec.Output())
	}
	t.Logf("killed after %d checks:\n%s", res.Checks, res.Failure.History.Story())
	n, err := loopcheck.Replay(refloop.NotifyOnly, opts, res.Schedule, "no-loss", 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reproduced %d of 3", n)
}
