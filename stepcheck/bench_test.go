package stepcheck_test

import (
	"context"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/selftest/bench"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// BenchmarkStepsVsBareSQL measures, side by side in one run, fault-free
// state-machine steps per second (each step: the action, then the read-back
// and every safety check) against two bare rates: the four core verbs
// issued straight through impl on warm sessions, and the same work (the
// run's own subject calls, replayed in order with no harness, reconnects
// after crashes included: bench.CallLog). It reports all three and the
// cost of a step in bare operations of each.
//
//	go test -run '^$' -bench StepsVsBareSQL ./stepcheck/
func BenchmarkStepsVsBareSQL(b *testing.B) {
	db := pgscratch.NewDatabase(b)
	setFlagTB(b, "rapid.checks", "20")
	var steps int
	var inHarness time.Duration
	var log bench.CallLog
	for b.Loop() {
		start := time.Now()
		stepcheck.Run(b, log.Record(reference.New), stepcheck.Options{DatabaseURL: db.URL,
			OnCheck: func(h *harness.History) { steps += len(h.Entries) }})
		inHarness += time.Since(start)
	}
	b.StopTimer()
	bare, err := bench.BareOps(context.Background(), pgscratch.NewDatabase(b).URL, 2000)
	if err != nil {
		b.Fatal(err)
	}
	same, err := log.Replay(context.Background(), pgscratch.NewDatabase(b).URL, reference.New)
	if err != nil {
		b.Fatal(err)
	}
	stepRate := float64(steps) / inHarness.Seconds()
	b.ReportMetric(stepRate, "steps/s")
	b.ReportMetric(bare.Rate(), "bare-ops/s")
	b.ReportMetric(bare.Rate()/stepRate, "bare/step-ratio")
	b.ReportMetric(same.Rate(), "same-work-ops/s")
	b.ReportMetric(same.Rate()/stepRate, "same-work/step-ratio")
}
