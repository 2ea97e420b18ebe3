package loopcheck

import (
	"context"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/internal/pgprov"
	"github.com/outboxcheck/outboxcheck/properties"
)

// Exercise runs the loop contract from a test. With opts.DatabaseURL
// empty it finds or starts PostgreSQL itself and removes what it made.
// It fails t with the failing schedule, and on a failure replays that
// schedule three times to say how often it comes back.
func Exercise(t *testing.T, newSubject NewSubject, opts Options) Result {
	t.Helper()
	if opts.DatabaseURL == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		_, db, cleanup, err := pgprov.Scratch(ctx)
		cancel()
		if err != nil {
			t.Fatalf("infrastructure error: %v", err)
		}
		defer cleanup()
		opts.DatabaseURL = db.URL
	}
	rec := properties.NewRecorder(t.Name(), nil)
	res := Run(rec, newSubject, opts)
	t.Logf("loopcheck: %d schedules", res.Checks)
	if !rec.Failed() {
		return res
	}
	if f := res.Failure; f != nil && !f.Infrastructure {
		n, err := Replay(newSubject, opts, res.Schedule, f.Property, 3)
		if err != nil {
			t.Logf("loopcheck: replay: %v", err)
		}
		t.Fatalf("%s\nloopcheck: the failing schedule reproduced %d of 3 times", rec.Output(), n)
	}
	t.Fatal(rec.Output())
	return res
}
