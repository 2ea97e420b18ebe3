package model

import (
	"testing"
	"time"
)

// jobQueue is a job queue's semantics, unlike the seed's at every point
// the model lets a subject declare.
func jobQueue() Semantics {
	return Semantics{Lease: time.Minute, MaxAttempts: 3,
		Backoff:           func(k int) (time.Duration, time.Duration) { return time.Second, 3 * time.Second },
		AttemptsOnFailure: true,
		Rescue:            &RescueRule{Delay: 5 * time.Second, CountsAttempt: true},
		Strict:            true, DeadKeepsAvailableAt: true,
		Redrive: RedriveRule{AnyIdle: true, OneMore: true},
		Names:   map[Status]string{Dead: "discarded", Failed: "retryable"}}
}

func TestSemanticsValidate(t *testing.T) {
	if err := jobQueue().Validate(); err != nil {
		t.Fatal(err)
	}
	if err := SeedSemantics().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := jobQueue()
	bad.Names = map[Status]string{Dead: "PENDING"}
	if bad.Validate() == nil {
		t.Error("DEAD spelled as the seed's PENDING was accepted")
	}
	bad = jobQueue()
	bad.Backoff = func(int) (time.Duration, time.Duration) { return 2 * time.Second, time.Second }
	if bad.Validate() == nil {
		t.Error("a backoff window with hi < lo was accepted")
	}
}

func TestDeclaredNames(t *testing.T) {
	sem := jobQueue()
	if st, ok := sem.ParseStatus("discarded"); !ok || st != Dead {
		t.Errorf("discarded = %v %v", st, ok)
	}
	if _, ok := sem.ParseStatus("DEAD"); ok {
		t.Error("the seed's DEAD parsed for a subject that spells it discarded")
	}
	if st, ok := sem.ParseStatus("PENDING"); !ok || st != Pending {
		t.Errorf("PENDING = %v %v", st, ok)
	}
}

// Attempts counted on failure: a claim leaves them, a failure adds one,
// and the row is discarded at its limit, keeping its available_at.
func TestAttemptsOnFailure(t *testing.T) {
	s := committed(t, New(t0, jobQueue()), "p", "e")
	s = AdvanceClock(s, ms(1))
	_, ps := claim(t, s, "k0", 1, Claimed{ID: "e", Attempts: 1})
	wantProblem(t, ps, Backoff) // a claim that counted an attempt
	for i, k := range []string{"k1", "k2", "k3"} {
		before := s.Rows["e"]
		s, ps = claim(t, s, k, 1, Claimed{ID: "e", Attempts: i})
		wantNone(t, ps)
		s, ps = MarkFailed(s, "e", k, true, Done)
		wantNone(t, ps)
		r := s.Rows["e"]
		if r.Attempts != i+1 {
			t.Fatalf("after failure %d: attempts %d", i+1, r.Attempts)
		}
		if i < 2 {
			if r.Status != Failed || !r.AvailableAt.Equal(s.Now.Add(time.Second)) || !r.AvailableLatest.Equal(s.Now.Add(3*time.Second)) {
				t.Fatalf("after failure %d: %s", i+1, s.describe(r))
			}
			s = AdvanceClock(s, 3*time.Second+ms(1))
			continue
		}
		if r.Status != Dead || !r.AvailableAt.Equal(before.AvailableAt) {
			t.Fatalf("at the limit: %s", s.describe(r))
		}
	}
}

// A jittered backoff: any available_at in the window is accepted and
// adopted; one outside it is backoff's problem.
func TestBackoffWindowIsAdopted(t *testing.T) {
	s := committed(t, New(t0, jobQueue()), "p", "e")
	s = AdvanceClock(s, ms(1))
	s, _ = claim(t, s, "k1", 1, Claimed{ID: "e", Attempts: 0})
	s, _ = MarkFailed(s, "e", "k1", true, Done)
	row := s.Rows["e"]
	row.AvailableLatest = time.Time{}
	for _, c := range []struct {
		at   time.Duration
		want string
	}{{time.Second, ""}, {2 * time.Second, ""}, {3 * time.Second, ""}, {time.Second - ms(1), Backoff}, {3*time.Second + ms(1), Backoff}} {
		got := row
		got.AvailableAt = s.Now.Add(c.at)
		next, ps := Observe(s, Observed{Rows: map[string]Row{"e": got}}, false)
		if c.want == "" {
			wantNone(t, ps)
			if r := next.Rows["e"]; !r.AvailableAt.Equal(got.AvailableAt) || !r.AvailableLatest.IsZero() {
				t.Errorf("%v: not adopted: %s", c.at, next.describe(r))
			}
			continue
		}
		wantProblem(t, ps, c.want)
	}
}

// Strict edges: at exactly available_at a row is not due yet.
func TestStrictEdges(t *testing.T) {
	s := committed(t, New(t0, jobQueue()), "p", "e")
	_, ps := claim(t, s, "k1", 1, Claimed{ID: "e", Attempts: 0})
	wantProblem(t, ps, Backoff)
	s = AdvanceClock(s, time.Nanosecond)
	_, ps = claim(t, s, "k1", 1, Claimed{ID: "e", Attempts: 0})
	wantNone(t, ps)
}

// Edges declared one by one: a fetch at <= (due at exactly available_at)
// beside a rescuer at < (a lease not over at exactly its end), and the
// other way round.
func TestMixedEdges(t *testing.T) {
	sem := jobQueue()
	sem.Strict, sem.StrictExpiry = false, true
	s := committed(t, New(t0, sem), "p", "e")
	s, ps := claim(t, s, "k1", 1, Claimed{ID: "e", Attempts: 0}) // due at the instant
	wantNone(t, ps)
	atEnd := AdvanceClock(s, time.Minute)
	_, ps = Rescue(atEnd, 1, Done) // strict expiry: not over yet
	wantProblem(t, ps, LeaseExclusive)
	_, ps = Rescue(atEnd, 0, Done)
	wantNone(t, ps)

	sem.StrictDue, sem.StrictExpiry = true, false
	s = committed(t, New(t0, sem), "p", "e")
	_, ps = claim(t, s, "k1", 1, Claimed{ID: "e", Attempts: 0})
	wantProblem(t, ps, Backoff)
	s = AdvanceClock(s, time.Nanosecond)
	s, _ = claim(t, s, "k1", 1, Claimed{ID: "e", Attempts: 0})
	_, ps = Rescue(AdvanceClock(s, time.Minute), 0, Done) // not strict: over at its end
	wantProblem(t, ps, NoLoss)
}

// Retention's edge on its own: a row published at exactly the cutoff is
// past it at <=, not at <.
func TestRetentionEdge(t *testing.T) {
	for _, strict := range []bool{false, true} {
		sem := SeedSemantics()
		sem.StrictRetention = strict
		s := committed(t, New(t0, sem), "p", "e")
		s, _ = claim(t, s, "k1", 1, Claimed{ID: "e", Attempts: 1})
		s, _ = MarkPublished(s, "e", "k1", true, Done)
		want := 1
		if strict {
			want = 0
		}
		if _, ps := Cleanup(s, 0, want, Done); len(ps) != 0 {
			t.Errorf("strict %v: deleting %d at the cutoff: %v", strict, want, ps)
		}
		if _, ps := Cleanup(s, 0, 1-want, Done); len(ps) == 0 {
			t.Errorf("strict %v: deleting %d at the cutoff passed", strict, 1-want)
		}
	}
}

// A rescuer: an expired lease is not claimable until the rescue, which
// re-queues it and revokes the claim; the revoked claimant's mark must
// change nothing; a rescue that leaves a lease over loses its event.
func TestRescue(t *testing.T) {
	s := committed(t, New(t0, jobQueue()), "p", "e")
	s = AdvanceClock(s, ms(1))
	s, _ = claim(t, s, "k1", 1, Claimed{ID: "e", Attempts: 0})
	over := AdvanceClock(s, time.Minute+ms(1))
	_, ps := claim(t, over, "k2", 1, Claimed{ID: "e", Attempts: 0})
	wantProblem(t, ps, LeaseExclusive)
	_, ps = Rescue(AdvanceClock(s, time.Minute), 0, Done) // strict: at the edge, not yet over
	wantNone(t, ps)
	_, ps = Rescue(AdvanceClock(s, time.Minute), 1, Done)
	wantProblem(t, ps, LeaseExclusive)
	_, ps = Rescue(over, 0, Done)
	wantProblem(t, ps, NoLoss)
	rescued, ps := Rescue(over, 1, Done)
	wantNone(t, ps)
	r := rescued.Rows["e"]
	if r.Status != Failed || r.ClaimID != "" || r.Attempts != 1 || !r.AvailableAt.Equal(over.Now.Add(5*time.Second)) {
		t.Fatalf("rescued: %s", rescued.describe(r))
	}
	_, ps = MarkPublished(rescued, "e", "k1", true, Done)
	wantProblem(t, ps, Fencing)
	_, ps = MarkPublished(rescued, "e", "k1", false, Done)
	wantNone(t, ps)
}

// Redrive of any idle row, granting one more attempt at the limit.
func TestRedriveOneMore(t *testing.T) {
	sem := jobQueue()
	sem.MaxAttempts = 1
	s := committed(t, New(t0, sem), "p", "e")
	s = committed(t, s, "q", "f")
	s = AdvanceClock(s, ms(1))
	s, _ = claim(t, s, "k1", 2, Claimed{ID: "e", Attempts: 0}, Claimed{ID: "f", Attempts: 0})
	_, ps := Redrive(s, "e", true, Done)
	wantProblem(t, ps, ModelAgreement) // held by a claim
	s, _ = MarkFailed(s, "e", "k1", true, Done)
	s, _ = MarkPublished(s, "f", "k1", true, Done)
	if s.Rows["e"].Status != Dead {
		t.Fatalf("want discarded at max attempts: %s", s.describe(s.Rows["e"]))
	}
	s, ps = Redrive(s, "e", true, Done)
	wantNone(t, ps)
	s, ps = Redrive(s, "f", true, Done) // a PUBLISHED row is idle too
	wantNone(t, ps)
	if r := s.Rows["f"]; r.Status != Pending || !r.PublishedAt.IsZero() {
		t.Fatalf("redriven published row: %s", s.describe(r))
	}
	s = AdvanceClock(s, ms(1))
	s, _ = claim(t, s, "k2", 1, Claimed{ID: "e", Attempts: 1})
	s, _ = MarkFailed(s, "e", "k2", true, Done)
	if r := s.Rows["e"]; r.Status != Dead || r.Attempts != 2 {
		t.Fatalf("one more attempt, then discarded again: %s", s.describe(r))
	}
}

// A redrive that looks like a retry: the row is left FAILED, due now,
// with one more attempt, and is claimed again as a failed row is.
func TestRedriveAsFailed(t *testing.T) {
	sem := jobQueue()
	sem.MaxAttempts = 1
	sem.Redrive.AsFailed = true
	s := committed(t, New(t0, sem), "p", "e")
	s = AdvanceClock(s, ms(1))
	s, _ = claim(t, s, "k1", 1, Claimed{ID: "e", Attempts: 0})
	s, _ = MarkFailed(s, "e", "k1", true, Done)
	s, ps := Redrive(s, "e", true, Done)
	wantNone(t, ps)
	if r := s.Rows["e"]; r.Status != Failed || r.Attempts != 1 || !r.AvailableAt.Equal(s.Now) {
		t.Fatalf("redriven as failed: %s", s.describe(r))
	}
	if st := s.ExpectedStats(); st.Failed != 1 || st.Dead != 0 {
		t.Fatalf("stats %+v, want it counted failed", st)
	}
	s = AdvanceClock(s, ms(1))
	_, ps = claim(t, s, "k2", 1, Claimed{ID: "e", Attempts: 1})
	wantNone(t, ps)
}

// LastDeadline is the latest instant anything waits for: the late end of
// a jittered backoff, or a lease.
func TestLastDeadline(t *testing.T) {
	s := committed(t, New(t0, jobQueue()), "p", "e")
	s = committed(t, s, "q", "f")
	s = AdvanceClock(s, ms(1))
	s, _ = claim(t, s, "k1", 2, Claimed{ID: "e", Attempts: 0}, Claimed{ID: "f", Attempts: 0})
	s, _ = MarkFailed(s, "e", "k1", true, Done)
	if at, ok := s.LastDeadline(); !ok || !at.Equal(s.Now.Add(time.Minute)) {
		t.Fatalf("last deadline %v %v, want f's lease end", at, ok)
	}
	s, _ = MarkPublished(s, "f", "k1", true, Done)
	if at, ok := s.LastDeadline(); !ok || !at.Equal(s.Now.Add(3*time.Second)) {
		t.Fatalf("last deadline %v %v, want the late end of e's backoff", at, ok)
	}
	if next, _ := s.NextAttemptAt(); !next.Equal(s.Now.Add(time.Second)) {
		t.Fatalf("next attempt %v, want the early end of e's backoff", next)
	}
}
