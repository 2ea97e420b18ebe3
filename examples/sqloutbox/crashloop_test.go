package sqloutbox_test

import (
	"context"
	"testing"

	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// Without its declaration, sqloutbox is held to crash-loop, and fails it:
// it counts an attempt only when a publish fails, so a message that
// crashes the relay publishing it (its lease runs out, unfailed) is
// leased again for ever.
func TestSQLOutboxCrashLoops(t *testing.T) {
	undeclared := func(ctx context.Context, env loopcheck.Env) (loopcheck.SQLSubject, error) {
		a, err := openAdapter(ctx, env)
		if a == nil {
			return nil, err
		}
		return a, err
	}
	opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, MaxAttempts: 3}
	s := loopcheck.Schedule{{Kind: "commit"}, {Kind: "crash-loop"}}
	n, f, err := loopcheck.Replay(loopcheck.SQL(undeclared), opts, s, "crash-loop", 1)
	if err != nil || n != 1 {
		t.Fatalf("crash-loop found it %d of 1 (%v): %+v", n, err, f)
	}
	t.Log(f.Message)
	if n, f, err := loopcheck.Replay(loopcheck.SQL(newAdapter), opts, s, "", 1); err != nil || n != 0 {
		t.Fatalf("declared, it still failed (%v): %+v", err, f)
	}
}
