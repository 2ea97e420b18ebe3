package jobqueue_test

import (
	"strings"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/examples/jobqueue"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// retryLike is the queue with a redrive that leaves a job as a failed
// one is: retryable, due now, one more attempt.
func retryLike() jobqueue.Queries {
	q := jobqueue.DefaultQueries()
	q.Retry = strings.Replace(q.Retry, "SET state = 'available'", "SET state = 'retryable'", 1)
	return q
}

// Declared (Redrive.AsFailed), it passes, faults on.
//
//	go test ./examples/jobqueue/ -run TestRedriveLikeARetryDeclared -rapid.checks=500
func TestRedriveLikeARetryDeclared(t *testing.T) {
	if retryLike() == jobqueue.DefaultQueries() {
		t.Fatal("the edit changed nothing")
	}
	sem := semantics(config)
	sem.Redrive.AsFailed = true
	stepcheck.Exercise(t, newAdapter(retryLike()), stepcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Faults: true, Semantics: sem})
}

// Undeclared, the same queue fails on the first redrive it makes: the
// declaration is what tells the model.
func TestRedriveLikeARetryUndeclared(t *testing.T) {
	restore := harness.Budget{Checks: 300, Seed: 1, ShrinkTime: 5 * time.Minute}.Apply() // a backstop
	defer restore()
	rec := harness.NewRecorder(t.Name(), nil)
	sum := stepcheck.Run(rec, newAdapter(retryLike()), stepcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Semantics: semantics(config), MaxShrinkRuns: 300})
	f := sum.Failure
	if f == nil {
		t.Fatalf("passed %d checks undeclared\n%s", sum.Checks, rec.Output())
	}
	t.Logf("killed by %s at check %d, shrunk to %d steps:\n%s", f.Property, sum.First.Check, len(f.History.Entries), f.History.Story())
	if !strings.Contains(f.Message, "retryable") || !strings.Contains(f.History.Story(), "Redrive") {
		t.Errorf("want a redriven row read back retryable, got %s: %s", f.Property, f.Message)
	}
}
