package loopcheck_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// Several schedules at once: each runner builds its own subject on its
// own database of the server, the run counts every schedule once, and
// the extra databases are gone when Run returns.
func TestParallelRunnersLeaveNothing(t *testing.T) {
	restore := harness.Budget{Checks: 8, Seed: 2}.Apply()
	defer restore()
	db := pgscratch.NewDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	count := func() (n int) {
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_database WHERE datname LIKE 'outboxcheck\_%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	urls := map[string]bool{}
	newSubject := func(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
		urls[env.ConnString(harness.Actor{Role: harness.Operator})] = true // the constructors run one at a time
		return refloop.New(ctx, env)
	}
	rec := harness.NewRecorder(t.Name(), nil)
	res := loopcheck.Run(rec, newSubject, loopcheck.Options{DatabaseURL: db.URL, Recovery: refloop.Recovery, Parallel: 3})
	if res.Failure != nil || rec.Failed() {
		t.Fatalf("%s\n%s", res.Story(), rec.Output())
	}
	if res.Parallel != 3 || len(urls) != 3 || res.Checks != 8 || len(res.Progress) != 8 {
		t.Fatalf("%d at a time (%s), %d databases, %d schedules, %d checkpoints; want 3, 3, 8, 8", res.Parallel, res.ParallelNote, len(urls), res.Checks, len(res.Progress))
	}
	for i, p := range res.Progress {
		if p.Check != i+1 || i > 0 && p.Elapsed < res.Progress[i-1].Elapsed {
			t.Errorf("checkpoint %d: %+v (after %+v)", i, p, res.Progress[max(i-1, 0)])
		}
	}
	if after := count(); after != before {
		t.Errorf("%d of the tool's databases before the run, %d after", before, after)
	}
}
