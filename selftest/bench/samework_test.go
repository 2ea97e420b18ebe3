package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

func TestMain(m *testing.M) { harness.NoFailFilesUnlessAsked(); pgscratch.Main(m) }

// The replay makes exactly the calls the harness made, each with the
// outcome it had: the same work. A recording whose outcome the replay
// does not meet is refused, not timed.
func TestSameWorkReplaysTheRunsCalls(t *testing.T) {
	ctx := context.Background()
	db := pgscratch.NewDatabase(t)
	var l CallLog
	restore := harness.Budget{Checks: 15, Seed: 3}.Apply()
	sum := stepcheck.Run(harness.NewRecorder("samework", nil), l.Record(reference.New), stepcheck.Options{DatabaseURL: db.URL})
	restore()
	if sum.Failure != nil {
		t.Fatalf("the reference failed: %s", sum.Failure.Message)
	}
	want := 0
	for op, n := range sum.Calls {
		switch op {
		case "Reset", "Commit", "Rollback", "Claim", "MarkPublished", "MarkFailed", "Redrive", "Cleanup", "Handle":
			want += n.Calls
		}
	}
	fails := 0
	for _, c := range l.calls {
		if c.fail {
			fails++
		}
	}
	got, err := l.Replay(ctx, pgscratch.NewDatabase(t).URL, reference.New)
	if err != nil {
		t.Fatal(err)
	}
	if got.Ops != want || want == 0 {
		t.Fatalf("the replay made %d database calls, the run %d", got.Ops, want)
	}
	if fails == 0 {
		t.Fatal("no recorded call failed: the seed exercises no broker refusal or consumer crash, pick another")
	}
	t.Logf("%d calls (%d failing as recorded) in %v", got.Ops, fails, got.Took)

	for i := range l.calls { // one outcome the replay cannot meet
		if l.calls[i].ops == 1 && !l.calls[i].fail {
			l.calls[i].fail = true
			break
		}
	}
	if _, err := l.Replay(ctx, pgscratch.NewDatabase(t).URL, reference.New); err == nil || !strings.Contains(err.Error(), "diverged") {
		t.Fatalf("a replay that cannot be the same work was timed: %v", err)
	}
}
