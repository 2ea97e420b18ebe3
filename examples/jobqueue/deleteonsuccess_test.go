package jobqueue_test

import (
	"strings"
	"testing"

	"github.com/outboxcheck/outboxcheck/examples/jobqueue"
	"github.com/outboxcheck/outboxcheck/model"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// deleting is the queue as many keep it: a completed job is deleted, not
// kept as 'completed'.
func deleting() jobqueue.Queries {
	q := jobqueue.DefaultQueries()
	q.Complete = `DELETE FROM jq_jobs WHERE id = $1 AND state = 'running' AND attempt_token = $2 AND $3::timestamptz IS NOT NULL`
	return q
}

// deletingSemantics declares it: no PUBLISHED row to read, so no-loss
// reads the broker and the effects for a deleted job.
func deletingSemantics() model.Semantics {
	sem := semantics(config)
	sem.DeleteOnSuccess = true
	return sem
}

// Declared, the deleting queue passes, faults on.
//
//	go test ./examples/jobqueue/ -run TestDeleteOnSuccessDeclared -rapid.checks=500
func TestDeleteOnSuccessDeclared(t *testing.T) {
	opts := stepcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Faults: true, Semantics: deletingSemantics()}
	if srv := pgscratch.Shared(t); srv.Owned() {
		opts.CrashDatabase = srv.Crash
	}
	stepcheck.Exercise(t, newAdapter(deleting()), opts)
}

// Two bugs a deleting queue has, each killed by no-loss: a fetch that
// deletes what it takes (committed before it is published: a crash in
// between loses it), and a failure that deletes the job instead of
// retrying it (deleted without being published). And undeclared, the
// correct queue fails too: the declaration is what the model reads.
func TestDeleteOnSuccessBugsAreCaught(t *testing.T) {
	for _, c := range []struct {
		name     string
		sql      func() jobqueue.Queries
		sem      model.Semantics
		property string
		detail   string
	}{
		{"fetch deletes what it takes", func() jobqueue.Queries {
			q := deleting()
			q.Fetch = `WITH due AS (
    SELECT id FROM jq_jobs
    WHERE state IN ('available', 'retryable') AND scheduled_at < $1
    ORDER BY scheduled_at, created_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
DELETE FROM jq_jobs j USING due WHERE j.id = due.id AND $4::timestamptz IS NOT NULL
RETURNING j.id, j.aggregate_id, j.args::text, j.attempt, $3::text, j.created_at`
			return q
		}, deletingSemantics(), model.NoLoss, "vanished"},
		{"failure deletes the job", func() jobqueue.Queries {
			q := deleting()
			q.Fail = `DELETE FROM jq_jobs WHERE id = $1 AND state = 'running' AND attempt_token = $2 AND $3::timestamptz IS NOT NULL AND $4::text IS NOT NULL`
			return q
		}, deletingSemantics(), model.NoLoss, "vanished"},
		{"undeclared", deleting, semantics(config), model.NoLoss, "vanished"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, _ := killed(t, c.sql(), c.sem, 300)
			if f.Property != c.property || !strings.Contains(f.Message, c.detail) {
				t.Errorf("want %s (%q), got %s: %s", c.property, c.detail, f.Property, f.Message)
			}
		})
	}
}
