package properties_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/impl"
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
	ops, bare := bareOps(b, db.URL, 2000)
	stepRate := float64(steps) / harness.Seconds()
	bareRate := float64(ops) / bare.Seconds()
	b.ReportMetric(stepRate, "steps/s")
	b.ReportMetric(bareRate, "bare-ops/s")
	b.ReportMetric(bareRate/stepRate, "bare/step-ratio")
}

// bareOps runs the core verbs — commit, claim, mark published, handle —
// directly through impl, n rounds, and returns the operation count and time.
func bareOps(b *testing.B, url string, n int) (int, time.Duration) {
	ctx := context.Background()
	open := func() *impl.Session {
		s, err := impl.NewSession(url)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close(ctx) })
		return s
	}
	ids := &impl.SequentialIDs{}
	for range 1_000_000 { // past the ids the harness used
		ids.NewID()
	}
	admin := impl.NewStore(open())
	conn, err := admin.Session.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if err := impl.Reset(ctx, conn); err != nil {
		b.Fatal(err)
	}
	producer := &impl.Producer{Session: open(), IDs: ids}
	store := impl.NewStore(open())
	consumer := &impl.Consumer{Session: open()}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	start := time.Now()
	for i := range n {
		if _, err := producer.CreatePayment(ctx, impl.Payment{ID: fmt.Sprintf("bare-%d", i), MerchantID: "m", AmountCents: 1}, now); err != nil {
			b.Fatal(err)
		}
		got, err := store.Claim(ctx, now, time.Minute, 1, ids.NewID())
		if err != nil || len(got) != 1 {
			b.Fatalf("claim: %v %v", got, err)
		}
		if _, err := store.MarkPublished(ctx, got[0].ID, got[0].ClaimID, now); err != nil {
			b.Fatal(err)
		}
		if err := consumer.Handle(ctx, impl.MessageOf(got[0]), nil); err != nil {
			b.Fatal(err)
		}
	}
	return 4 * n, time.Since(start)
}
