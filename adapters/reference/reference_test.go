package reference_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/impl/mutants"
	"github.com/outboxcheck/outboxcheck/model"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

func TestMain(m *testing.M) { harness.NoFailFilesUnlessAsked(); pgscratch.Main(m) }

type refusing struct{}

func (refusing) Publish(context.Context, harness.Message) error { return fmt.Errorf("refused") }

// Publish takes the time of the dispatcher's last call in this check,
// never one left over from an earlier check: otherwise a check's history
// would depend on the checks before it, and a replay of it alone would
// differ. Shown with the one mutant whose Publish writes a time.
func TestPublishTimeIsThisChecks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db := pgscratch.NewDatabase(t)
	n := 0
	env := stepcheck.Env{
		ConnString:  func(harness.Actor) string { return db.URL },
		NewID:       func() string { n++; return fmt.Sprintf("00000000-0000-4000-8000-%012x", n) },
		Semantics:   model.Semantics{Lease: time.Minute, MaxAttempts: 5, BackoffBase: time.Second, BackoffCap: 4},
		Dispatchers: 1, Consumers: 1,
	}
	s, err := reference.Build(ctx, env, mutants.MarkPublishedBeforePublishing)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	claim := func(at time.Time) stepcheck.Claimed {
		t.Helper()
		p := harness.Payment{ID: fmt.Sprintf("pay-%d", n), MerchantID: "m", AmountCents: 100}
		if _, err := s.Commit(ctx, p, at); err != nil {
			t.Fatal(err)
		}
		got, err := s.Claim(ctx, 0, at, 1)
		if err != nil || len(got) != 1 {
			t.Fatalf("claim: %v, %d rows", err, len(got))
		}
		return got[0]
	}
	// An earlier check leaves dispatcher 0's last call an hour on.
	c := claim(epoch)
	if _, err := s.MarkPublished(ctx, 0, c, epoch.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	// This check claims at the epoch and publishes.
	c = claim(epoch)
	_ = s.Publish(ctx, 0, c, refusing{})
	rows, err := s.Rows(ctx)
	if err != nil || len(rows) != 1 {
		t.Fatalf("rows: %v, %d", err, len(rows))
	}
	if got := rows[0].PublishedAt; !got.Equal(epoch) {
		t.Fatalf("published_at %v, want %v: the time of this check's claim", got, epoch)
	}
}
