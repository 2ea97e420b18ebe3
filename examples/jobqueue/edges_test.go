package jobqueue_test

import (
	"strings"
	"testing"

	"github.com/outboxcheck/outboxcheck/examples/jobqueue"
	"github.com/outboxcheck/outboxcheck/model"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// mixedEdges is the queue as many job queues are: its fetch takes a job
// once scheduled_at <= now, while its rescuer and its cleaner act only
// once lease_until < now and finalized_at < cutoff.
func mixedEdges() jobqueue.Queries {
	q := jobqueue.DefaultQueries()
	q.Fetch = strings.Replace(q.Fetch, "scheduled_at < $1", "scheduled_at <= $1", 1)
	return q
}

// mixedSemantics declares those edges one by one, with nothing folded
// into the lease.
func mixedSemantics() model.Semantics {
	sem := semantics(config)
	sem.Strict, sem.StrictExpiry, sem.StrictRetention = false, true, true
	return sem
}

// Declared edge by edge, the queue passes, faults on.
//
//	go test ./examples/jobqueue/ -run TestMixedEdgesDeclared -rapid.checks=500
func TestMixedEdgesDeclared(t *testing.T) {
	if sql := mixedEdges(); sql == jobqueue.DefaultQueries() {
		t.Fatal("the edit changed nothing")
	}
	db := pgscratch.NewDatabase(t)
	opts := stepcheck.Options{DatabaseURL: db.URL, Faults: true, Semantics: mixedSemantics()}
	stepcheck.Exercise(t, newAdapter(mixedEdges()), opts)
}

// The declaration matters: the same queue declared with one strictness
// for every edge fails at the edge it gets wrong, with the property
// that compares there.
func TestMixedEdgesWronglyDeclared(t *testing.T) {
	for _, c := range []struct {
		name     string
		declare  func(*model.Semantics)
		property string
		detail   string
	}{
		{"every edge strict", func(s *model.Semantics) { s.Strict = true }, model.Backoff, "before its available_at"},
		{"no edge strict", func(s *model.Semantics) { s.StrictExpiry, s.StrictRetention = false, false }, model.NoLoss, "never taken back"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sem := mixedSemantics()
			c.declare(&sem)
			f, _ := killed(t, mixedEdges(), sem, 300)
			if f.Property != c.property || !strings.Contains(f.Message, c.detail) {
				t.Errorf("want %s (%q), got %s: %s", c.property, c.detail, f.Property, f.Message)
			}
		})
	}
}
