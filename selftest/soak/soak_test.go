package soak_test

import (
	"context"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/impl/mutants"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/selftest/soak"
)

func TestMain(m *testing.M) { harness.NoFailFilesUnlessAsked(); pgscratch.Main(m) }

// The baseline must be fair: the reference passes it under the full fault
// rotation, and it does catch a bug that shows in the end state.
func TestSoak(t *testing.T) {
	ctx := context.Background()
	t.Run("reference passes", func(t *testing.T) {
		res, err := soak.Run(ctx, reference.New, soak.Config{DatabaseURL: pgscratch.NewDatabase(t).URL, Budget: 6 * time.Second, Faults: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d rounds, %d payments committed", res.Rounds, res.Paid)
		if res.Killed {
			t.Fatalf("false positive on the reference: %s", res.Problem)
		}
		if res.Paid == 0 {
			t.Fatal("no payment was committed: the soak did nothing")
		}
	})
	t.Run("claim-no-reclaim is caught", func(t *testing.T) {
		res, err := soak.Run(ctx, reference.Mutated(mutants.ClaimNoReclaim), soak.Config{DatabaseURL: pgscratch.NewDatabase(t).URL, Budget: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Killed {
			t.Fatalf("survived %d rounds", res.Rounds)
		}
		t.Logf("caught after %v: %s", res.ToFail, res.Problem)
	})
}
