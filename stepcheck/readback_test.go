package stepcheck_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/impl/mutants"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// readBackSubject is the reference (a ReadBacker) that counts how it is
// read, and whose ReadBack may leave out the ledger.
type readBackSubject struct {
	*reference.Subject
	readBacks, rows *atomic.Int64
	hideEffects     bool
}

func (s readBackSubject) ReadBack(ctx context.Context, now time.Time) (stepcheck.ReadBack, error) {
	s.readBacks.Add(1)
	rb, err := s.Subject.ReadBack(ctx, now)
	if s.hideEffects {
		rb.Effects = map[string]int{}
	}
	return rb, err
}

func (s readBackSubject) Rows(ctx context.Context) ([]stepcheck.Row, error) {
	s.rows.Add(1)
	return s.Subject.Rows(ctx)
}

// A subject that reads everything back in one call is read so, never by
// Rows, and what that call returns is what the harness judges: a ReadBack
// that leaves out the ledger is caught.
func TestReadBackerIsWhatIsRead(t *testing.T) {
	defer harness.Budget{Checks: 20, ShrinkTime: time.Second}.Apply()() // no fail files
	db := pgscratch.NewDatabase(t)
	run := func(hide bool) (harness.Summary, int64, int64) {
		var readBacks, rows atomic.Int64
		var tb rapid.TB = t
		if hide {
			tb = harness.NewRecorder("lying-readback", nil)
		}
		sum := stepcheck.Run(tb, func(ctx context.Context, env stepcheck.Env) (stepcheck.Subject, error) {
			s, err := reference.Build(ctx, env, mutants.Mutant{})
			return readBackSubject{Subject: s, readBacks: &readBacks, rows: &rows, hideEffects: hide}, err
		}, stepcheck.Options{DatabaseURL: db.URL})
		return sum, readBacks.Load(), rows.Load()
	}
	sum, readBacks, rows := run(false)
	if sum.Failure != nil || readBacks == 0 || rows != 0 {
		t.Fatalf("honest ReadBack: failure %v, %d ReadBack calls, %d Rows calls; want a pass read by ReadBack alone", sum.Failure, readBacks, rows)
	}
	sum, _, _ = run(true)
	if sum.Failure == nil || sum.Failure.Infrastructure {
		t.Fatalf("a ReadBack without the ledger passed: %v", sum.Failure)
	}
	t.Logf("caught as %s: %s", sum.Failure.Property, sum.Failure.Message)
}
