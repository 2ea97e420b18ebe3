package properties_test

import (
	"context"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/internal/bench"
	"github.com/outboxcheck/outboxcheck/internal/pgtest"
	"github.com/outboxcheck/outboxcheck/properties"
)

// BenchmarkStepsVsBareSQL measures, side by side in one run, fault-free
// state-machine steps per second (each step: the action, then the read-back
// and every safety check) and the bare rate of the same operations issued
// straight through impl with no harness. It reports both and their ratio.
//
//	go test -run '^$' -bench StepsVsBareSQL ./properties/
func BenchmarkStepsVsBareSQL(b *testing.B) {
	db := pgtest.Database(b)
	setFlagTB(b, "rapid.checks", "20")
	var steps int
	var harness time.Duration
	for b.Loop() {
		start := time.Now()
		properties.Run(b, reference.New, properties.Options{DatabaseURL: db.URL,
			OnCheck: func(h *properties.History) { steps += len(h.Entries) }})
		harness += time.Since(start)
	}
	b.StopTimer()
	bare, err := bench.BareOps(context.Background(), pgtest.Database(b).URL, 2000)
	if err != nil {
		b.Fatal(err)
	}
	stepRate := float64(steps) / harness.Seconds()
	b.ReportMetric(stepRate, "steps/s")
	b.ReportMetric(bare.Rate(), "bare-ops/s")
	b.ReportMetric(bare.Rate()/stepRate, "bare/step-ratio")
}
