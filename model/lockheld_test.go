package model

import (
	"testing"
	"time"
)

func lockHeld() Semantics {
	sem := SeedSemantics()
	sem.LockHeld, sem.DeleteOnSuccess, sem.AttemptsOnFailure = true, true, true
	return sem
}

// A lock-held claim: others see the row as it was, cannot take it, and
// see the mark only once it commits; a session's end gives the row back.
func TestLockHeldClaims(t *testing.T) {
	s := committed(t, New(t0, lockHeld()), "p", "e")
	pending := s.Rows["e"]
	s, ps := Claim(s, 1, []Claimed{{ID: "e", Attempts: 0, ClaimID: "k1", Holder: 0}})
	wantNone(t, ps)
	if _, ps := Observe(s, Observed{Rows: map[string]Row{"e": pending}}, false); len(ps) != 0 {
		t.Fatalf("a held row read back as it was: %v", ps)
	}
	_, ps = Claim(AdvanceClock(s, time.Hour), 1, []Claimed{{ID: "e", Attempts: 0, ClaimID: "k2", Holder: 1}})
	wantProblem(t, ps, LeaseExclusive) // no lease to run out: held until its session ends

	released := Release(s, 0)
	if !released.Due(released.Rows["e"]) {
		t.Fatal("a released row is not due")
	}
	// The mark whose failure ended the session may have committed first.
	raced, _ := MarkPublished(released, "e", "k1", false, Unknown)
	if len(raced.Maybe) != 1 {
		t.Fatal("an unknown mark of the step that ended its session: not unsure")
	}
	released, _ = Observe(released, Observed{Rows: map[string]Row{"e": pending}}, false)
	_, ps = MarkPublished(released, "e", "k1", true, Done)
	wantProblem(t, ps, Fencing) // its transaction is gone
	_, ps = MarkPublished(released, "e", "k1", false, Done)
	wantNone(t, ps)

	failed, ps := MarkFailed(s, "e", "k1", true, Done)
	wantNone(t, ps)
	if r := failed.Rows["e"]; r.Status != Failed || r.Attempts != 1 || len(failed.Held) != 0 {
		t.Fatalf("after a committed failure: %s, held %v", failed.describe(r), failed.Held)
	}

	done, ps := MarkPublished(s, "e", "k1", true, Done)
	wantNone(t, ps)
	if _, ok := done.Rows["e"]; ok || len(done.Held) != 0 {
		t.Fatal("a committed delete left the row or its hold")
	}
	maybe, _ := MarkPublished(s, "e", "k1", false, Unknown)
	for _, got := range []map[string]Row{{}, {"e": pending}} {
		if _, ps := Observe(Release(maybe, 0), Observed{Rows: got}, false); len(ps) != 0 {
			t.Fatalf("an unknown mark read back %v: %v", got, ps)
		}
	}
	if g, _ := Observe(maybe, Observed{Rows: map[string]Row{}}, false); len(g.Gone) != 1 {
		t.Fatal("an unknown mark that deleted the row: not counted gone")
	}
	if s := ClaimUnknown(s); len(s.Maybe) != 0 {
		t.Fatal("an unknown lock-held claim left maybes: its session is ended")
	}
	if err := (Semantics{Lease: time.Minute, MaxAttempts: 1, BackoffBase: time.Second, LockHeld: true, Rescue: &RescueRule{}}).Validate(); err == nil {
		t.Fatal("LockHeld with Rescue validated")
	}
}
