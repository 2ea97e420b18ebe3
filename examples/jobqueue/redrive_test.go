package jobqueue_test

import (
	"strings"
	"testing"

	"github.com/outboxcheck/outboxcheck/examples/jobqueue"
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
	f, _ := killed(t, retryLike(), semantics(config), 300)
	if !strings.Contains(f.Message, "retryable") || !strings.Contains(f.History.Story(), "Redrive") {
		t.Errorf("want a redriven row read back retryable, got %s: %s", f.Property, f.Message)
	}
}
