package stepcheck

import (
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/model"
)

// Leaving a number out keeps every rule declared beside it: a lock-held
// queue that shares the seed's lease need not say so.
func TestDefaultsKeepDeclaredRules(t *testing.T) {
	o := Options{Semantics: model.Semantics{LockHeld: true, DeleteOnSuccess: true, Without: []model.Operation{model.OpStats}}}.withDefaults()
	s := o.Semantics
	if !s.LockHeld || !s.DeleteOnSuccess || s.Has(model.OpStats) {
		t.Fatalf("declared rules dropped: %+v", s)
	}
	if s.Lease != time.Minute || s.MaxAttempts != 3 || s.BackoffBase != time.Second || s.BackoffCap != 10 {
		t.Fatalf("numbers %v %d %v %d, want the seed's with 3 attempts", s.Lease, s.MaxAttempts, s.BackoffBase, s.BackoffCap)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	o = Options{Semantics: model.Semantics{Lease: 30 * time.Second, MaxAttempts: 5, BackoffBase: 2 * time.Second, BackoffCap: 0}}.withDefaults()
	if s := o.Semantics; s.Lease != 30*time.Second || s.MaxAttempts != 5 || s.BackoffBase != 2*time.Second || s.BackoffCap != 0 {
		t.Fatalf("declared numbers changed: %+v", s)
	}
}
