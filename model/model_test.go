package model

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func committed(t *testing.T, s State, pay, id string) State {
	t.Helper()
	s, ps := Commit(s, pay, id, Done)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	return s
}

func claim(t *testing.T, s State, claimID string, limit int, got ...Claimed) (State, []Problem) {
	t.Helper()
	for i := range got {
		got[i].ClaimID = claimID
	}
	return Claim(s, limit, got)
}

func wantProblem(t *testing.T, ps []Problem, property string) {
	t.Helper()
	p, ok := First(ps)
	if !ok || p.Property != property {
		t.Fatalf("problems %v, want first %s", ps, property)
	}
}

func wantNone(t *testing.T, ps []Problem) {
	t.Helper()
	if len(ps) > 0 {
		t.Fatalf("unexpected problems: %v", ps)
	}
}

func TestDueRules(t *testing.T) {
	s := New(t0, SeedSemantics())
	cases := []struct {
		name string
		row  Row
		due  bool
	}{
		{"pending available now", Row{Status: Pending, AvailableAt: t0}, true},
		{"pending available 1ms later", Row{Status: Pending, AvailableAt: t0.Add(ms(1))}, false},
		{"failed available 1ms ago", Row{Status: Failed, AvailableAt: t0.Add(-ms(1))}, true},
		{"failed in backoff", Row{Status: Failed, AvailableAt: t0.Add(time.Second)}, false},
		{"lease expires now", Row{Status: Publishing, ClaimExpiresAt: t0}, true},
		{"lease expires in 1ms", Row{Status: Publishing, ClaimExpiresAt: t0.Add(ms(1))}, false},
		{"published", Row{Status: Published, AvailableAt: t0}, false},
		{"dead", Row{Status: Dead, AvailableAt: t0}, false},
	}
	for _, c := range cases {
		if got := s.Due(c.row); got != c.due {
			t.Errorf("%s: Due = %v, want %v", c.name, got, c.due)
		}
	}
}

func TestClaimOrderAndTies(t *testing.T) {
	s := New(t0, SeedSemantics())
	s = committed(t, s, "p1", "a")
	s = committed(t, s, "p2", "b") // ties with a
	s = AdvanceClock(s, ms(1))
	s = committed(t, s, "p3", "c")
	if got := s.DueOrder(); len(got) != 2 || len(got[0]) != 2 || got[1][0] != "c" {
		t.Fatalf("DueOrder = %v, want [[a b] [c]]", got)
	}
	cases := []struct {
		name  string
		limit int
		take  []string
		want  string // property of the first problem, "" for none
	}{
		{"oldest tie, either one", 1, []string{"b"}, ""},
		{"the other of the tie", 1, []string{"a"}, ""},
		{"full claim skipping an earlier row", 1, []string{"c"}, ModelAgreement},
		{"short claim may skip (SKIP LOCKED)", 3, []string{"c"}, ""},
		{"all three", 3, []string{"c", "a", "b"}, ""},
	}
	for _, c := range cases {
		var got []Claimed
		for _, id := range c.take {
			got = append(got, Claimed{ID: id, Attempts: 1})
		}
		_, ps := claim(t, s, "k-"+c.name, c.limit, got...)
		if c.want == "" {
			if len(ps) > 0 {
				t.Errorf("%s: %v", c.name, ps)
			}
			continue
		}
		if p, ok := First(ps); !ok || p.Property != c.want {
			t.Errorf("%s: problems %v, want %s", c.name, ps, c.want)
		}
	}
}

// Two claims at one instant scan together under SKIP LOCKED: a full claim
// may pass over a row only because the other claim held it.
func TestClaimBeside(t *testing.T) {
	s := New(t0, SeedSemantics())
	for _, id := range []string{"a", "b", "c"} {
		s = AdvanceClock(s, ms(1))
		s = committed(t, s, "p"+id, id)
	}
	one := func(claimID string, ids ...string) []Claimed {
		var out []Claimed
		for _, id := range ids {
			out = append(out, Claimed{ID: id, Attempts: 1, ClaimID: claimID})
		}
		return out
	}
	// The interleaving the reference produced: the first claim (limit 2)
	// locked a, the second (limit 1) found a locked and took b, the first
	// then found b locked and took c. No order of the two explains it.
	first, second := one("k1", "a", "c"), one("k2", "b")
	if _, ps := Claim(s, 2, first); len(ps) == 0 {
		t.Fatal("alone, a full claim passing over b must be flagged")
	}
	s2, ps := ClaimBeside(s, 2, first, Done, second)
	wantNone(t, ps)
	_, ps = ClaimBeside(s2, 1, second, Done, first)
	wantNone(t, ps)
	// Passing over a row the other did not take stays a fault.
	_, ps = ClaimBeside(s, 2, one("k3", "a", "c"), Done, one("k4", "a"))
	wantProblem(t, ps, ModelAgreement)
	// A row both took is a live lease on the second.
	s2, _ = ClaimBeside(s, 1, one("k5", "a"), Done, one("k6", "a"))
	_, ps = ClaimBeside(s2, 1, one("k6", "a"), Done, one("k5", "a"))
	wantProblem(t, ps, LeaseExclusive)
	// Beside a claim whose outcome is unknown, anything may have been locked.
	_, ps = ClaimBeside(s, 1, one("k7", "c"), Unknown, nil)
	wantNone(t, ps)
}

func TestLeaseEdges(t *testing.T) {
	s := New(t0, SeedSemantics())
	s = committed(t, s, "p", "e")
	s, ps := claim(t, s, "k1", 10, Claimed{ID: "e", Attempts: 1})
	wantNone(t, ps)
	held := AdvanceClock(s, time.Minute-ms(1))
	_, ps = claim(t, held, "k2", 10, Claimed{ID: "e", Attempts: 2})
	wantProblem(t, ps, LeaseExclusive)

	expired := AdvanceClock(s, time.Minute)
	s2, ps := claim(t, expired, "k2", 10, Claimed{ID: "e", Attempts: 2})
	wantNone(t, ps)
	// The old claimant is now stale: its marks must change nothing.
	_, ps = MarkPublished(s2, "e", "k1", true, Done)
	wantProblem(t, ps, Fencing)
	_, ps = MarkFailed(s2, "e", "k1", true, Done)
	wantProblem(t, ps, Fencing)
	s3, ps := MarkPublished(s2, "e", "k1", false, Done)
	wantNone(t, ps)
	if s3.Rows["e"].ClaimID != "k2" {
		t.Fatalf("stale mark changed the model: %+v", s3.Rows["e"])
	}
	// The current claimant's mark must change the row.
	_, ps = MarkPublished(s2, "e", "k2", false, Done)
	wantProblem(t, ps, ModelAgreement)
	s4, ps := MarkPublished(s2, "e", "k2", true, Done)
	wantNone(t, ps)
	if r := s4.Rows["e"]; r.Status != Published || !r.PublishedAt.Equal(expired.Now) || r.ClaimID != "" {
		t.Fatalf("after mark: %+v", r)
	}
	// A claim id may not be reused.
	s5 := committed(t, s4, "q", "f")
	_, ps = claim(t, s5, "k2", 10, Claimed{ID: "f", Attempts: 1})
	wantProblem(t, ps, ModelAgreement)
}

func TestBackoffEdges(t *testing.T) {
	p := Semantics{Lease: time.Minute, MaxAttempts: 20, BackoffBase: time.Second, BackoffCap: 10}
	for _, c := range []struct {
		attempts int
		wait     time.Duration
		status   Status
	}{
		{1, 2 * time.Second, Failed}, // the first failure waits 2 s, not 1 s
		{2, 4 * time.Second, Failed},
		{9, 512 * time.Second, Failed},
		{10, 1024 * time.Second, Failed},
		{11, 1024 * time.Second, Failed}, // capped at 2^10
		{19, 1024 * time.Second, Failed},
		{20, 1024 * time.Second, Dead}, // DEAD at max attempts
		{21, 1024 * time.Second, Dead}, // reclaimed past the limit by lease expiry
	} {
		if lo, hi := p.BackoffRange(c.attempts); lo != c.wait || hi != c.wait {
			t.Errorf("BackoffRange(%d) = %v..%v, want %v", c.attempts, lo, hi, c.wait)
		}
		if got := New(t0, p).fail(Row{Status: Publishing, Attempts: c.attempts}, true, p.BackoffRange).Status; got != c.status {
			t.Errorf("a failure at %d attempts leaves %v, want %v", c.attempts, got, c.status)
		}
	}

	s := New(t0, SeedSemantics())
	s = committed(t, s, "p", "e")
	s, _ = claim(t, s, "k1", 1, Claimed{ID: "e", Attempts: 1})
	s, ps := MarkFailed(s, "e", "k1", true, Done)
	wantNone(t, ps)
	if r := s.Rows["e"]; r.Status != Failed || !r.AvailableAt.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("after first failure: %+v", r)
	}
	early := AdvanceClock(s, 2*time.Second-ms(1))
	_, ps = claim(t, early, "k2", 1, Claimed{ID: "e", Attempts: 2})
	wantProblem(t, ps, Backoff)
	onTime := AdvanceClock(s, 2*time.Second)
	_, ps = claim(t, onTime, "k2", 1, Claimed{ID: "e", Attempts: 2})
	wantNone(t, ps)
	// A claim that does not count the attempt is a backoff problem.
	_, ps = claim(t, onTime, "k3", 1, Claimed{ID: "e", Attempts: 1})
	wantProblem(t, ps, Backoff)
}

func TestRedriveAndCleanup(t *testing.T) {
	s := New(t0, Semantics{Lease: time.Minute, MaxAttempts: 1, BackoffBase: time.Second, BackoffCap: 10})
	s = committed(t, s, "p", "e")
	s = committed(t, s, "q", "f")
	s, _ = claim(t, s, "k1", 2, Claimed{ID: "e", Attempts: 1}, Claimed{ID: "f", Attempts: 1})
	s, _ = MarkFailed(s, "e", "k1", true, Done)
	s, _ = MarkPublished(s, "f", "k1", true, Done)
	if s.Rows["e"].Status != Dead {
		t.Fatalf("want DEAD at max attempts, got %v", s.Rows["e"].Status)
	}
	_, ps := Redrive(s, "f", true, Done)
	wantProblem(t, ps, ModelAgreement) // f is not DEAD
	s, ps = Redrive(s, "e", true, Done)
	wantNone(t, ps)
	if r := s.Rows["e"]; r.Status != Pending || r.Attempts != 0 || !s.Due(r) {
		t.Fatalf("after redrive: %+v", r)
	}
	_, ps = Cleanup(s, time.Hour, 0, Done)
	wantNone(t, ps) // f published just now: inside retention
	later := AdvanceClock(s, time.Hour)
	_, ps = Cleanup(later, time.Hour, 2, Done)
	wantProblem(t, ps, RetentionSafe)
	gone, ps := Cleanup(later, time.Hour, 1, Done)
	wantNone(t, ps)
	if _, ok := gone.Rows["f"]; ok || gone.Gone["f"].Status != Published {
		t.Fatal("cleanup did not move f to Gone")
	}
}

// An unknown commit is neither assumed nor denied: the observation decides,
// and either answer is accepted without a problem.
func TestUnknownCommitIsResolvedByObservation(t *testing.T) {
	s := New(t0, SeedSemantics())
	s, ps := Commit(s, "p", "e", Unknown)
	wantNone(t, ps)
	if s.Settled() {
		t.Fatal("an unknown commit left the model settled")
	}
	row := Row{ID: "e", AggregateID: "p", Status: Pending, AvailableAt: t0, CreatedAt: t0}
	yes, ps := Observe(s, Observed{Rows: map[string]Row{"e": row}}, false)
	wantNone(t, ps)
	if _, ok := yes.Rows["e"]; !ok || !yes.Settled() {
		t.Fatal("the committed row was not adopted")
	}
	no, ps := Observe(s, Observed{Rows: map[string]Row{}}, false)
	wantNone(t, ps)
	if no.Known("e") || !no.Settled() {
		t.Fatal("an absent row was not resolved as not committed")
	}
	// But a row no outcome explains is a problem.
	wrong := row
	wrong.Attempts = 5
	_, ps = Observe(s, Observed{Rows: map[string]Row{"e": wrong}}, false)
	wantProblem(t, ps, Backoff) // attempts drive the backoff
	wrong = row
	wrong.CreatedAt = t0.Add(time.Hour)
	_, ps = Observe(s, Observed{Rows: map[string]Row{"e": wrong}}, false)
	wantProblem(t, ps, ModelAgreement)
}

func TestUnknownMarkIsResolvedByObservation(t *testing.T) {
	s := New(t0, SeedSemantics())
	s = committed(t, s, "p", "e")
	s, _ = claim(t, s, "k", 1, Claimed{ID: "e", Attempts: 1})
	before := s.Rows["e"]
	s, ps := MarkPublished(s, "e", "k", false, Unknown)
	wantNone(t, ps)
	after := before
	after.Status, after.PublishedAt, after.ClaimID, after.ClaimExpiresAt = Published, t0, "", time.Time{}
	for _, r := range []Row{before, after} {
		got, ps := Observe(s, Observed{Rows: map[string]Row{"e": r}}, false)
		wantNone(t, ps)
		if got.Rows["e"].Status != r.Status {
			t.Fatalf("adopted %v, want %v", got.Rows["e"].Status, r.Status)
		}
	}
}

func TestObserveNamesTheBrokenProperty(t *testing.T) {
	s := New(t0, SeedSemantics())
	s = committed(t, s, "p", "e")
	s, _ = claim(t, s, "k", 1, Claimed{ID: "e", Attempts: 1})
	s, _ = MarkPublished(s, "e", "k", true, Done)
	s = Rollback(s, "r")
	pub := s.Rows["e"]

	reverted := pub
	reverted.Status = Pending
	_, ps := Observe(s, Observed{Rows: map[string]Row{"e": reverted}}, false)
	wantProblem(t, ps, Fencing)

	_, ps = Observe(s, Observed{Rows: map[string]Row{}}, false)
	wantProblem(t, ps, NoLoss)

	phantom := Row{ID: "x", AggregateID: "r", Status: Pending, AvailableAt: t0, CreatedAt: t0}
	_, ps = Observe(s, Observed{Rows: map[string]Row{"e": pub, "x": phantom}}, false)
	wantProblem(t, ps, NoPhantom)

	_, ps = Observe(s, Observed{Rows: map[string]Row{"e": pub}, Effects: map[string]int{"e": 2}}, false)
	wantProblem(t, ps, EffectAtMostOnce)
}

func TestDeliveryAndLiveness(t *testing.T) {
	s := New(t0, SeedSemantics())
	s = committed(t, s, "p", "e")
	s, _ = claim(t, s, "k", 1, Claimed{ID: "e", Attempts: 1})
	s, ps := Publish(s, "e", `{"p":1}`)
	wantNone(t, ps)
	_, ps = Publish(s, "zzz", `{"q":1}`)
	wantProblem(t, ps, NoPhantom)

	if ps := Liveness(s); len(ps) == 0 || ps[0].Property != NoLoss {
		t.Fatalf("an unpublished event passed liveness: %v", ps)
	}
	s, _ = MarkPublished(s, "e", "k", true, Done)
	crashed := Deliver(s, 0, CrashedBefore)
	if ps := Liveness(crashed); len(ps) != 1 || !strings.Contains(ps[0].Detail, "never delivered") {
		t.Fatalf("liveness after a crashed delivery: %v", ps)
	}
	s = Deliver(Deliver(s, 0, CrashedAfter), 0, Acked) // redelivered: no second effect
	if s.Effects["e"] != 1 {
		t.Fatalf("effects %d, want 1", s.Effects["e"])
	}
	wantNone(t, Liveness(s))
	// An acknowledged delivery whose effect is missing breaks exactly-once.
	_, ps = Observe(s, Observed{Rows: map[string]Row{"e": s.Rows["e"]}, Effects: map[string]int{}}, false)
	wantProblem(t, ps, EffectExactlyOnce)
}

// Step functions never change the state they are given.
func TestStepsArePure(t *testing.T) {
	s := committed(t, New(t0, SeedSemantics()), "p", "e")
	before := s.Rows["e"]
	_, _ = Claim(s, 1, []Claimed{{ID: "e", Attempts: 1, ClaimID: "k"}})
	_ = AdvanceClock(s, time.Hour)
	_, _ = Publish(s, "e", "x")
	if s.Rows["e"] != before || !s.Now.Equal(t0) || len(s.Broker) != 0 || len(s.Claims) != 0 {
		t.Fatal("a step mutated its input state")
	}
}

// A claim whose reply was lost may have taken due rows under a claim_id
// nobody saw: either outcome is accepted, and a reused claim_id is not.
func TestUnknownClaimIsResolvedByObservation(t *testing.T) {
	s := committed(t, New(t0, SeedSemantics()), "p", "e")
	s, _ = claim(t, s, "old", 1, Claimed{ID: "e", Attempts: 1})
	s = AdvanceClock(s, time.Minute)
	before := s.Rows["e"]
	u := ClaimUnknown(s)
	taken := before
	taken.Attempts, taken.ClaimID, taken.ClaimExpiresAt = 2, "fresh", s.Now.Add(time.Minute)
	for _, r := range []Row{before, taken} {
		got, ps := Observe(u, Observed{Rows: map[string]Row{"e": r}}, false)
		wantNone(t, ps)
		if got.Rows["e"].ClaimID != r.ClaimID {
			t.Fatalf("adopted claim %q, want %q", got.Rows["e"].ClaimID, r.ClaimID)
		}
	}
	reused := taken
	reused.ClaimID = "old"
	_, ps := Observe(u, Observed{Rows: map[string]Row{"e": reused}}, false)
	wantProblem(t, ps, ModelAgreement)
}

// One unknown claim may take several rows under one new claim_id: adopting
// the first must not make the claim_id look reused for the second.
func TestUnknownClaimOfSeveralRows(t *testing.T) {
	s := committed(t, New(t0, SeedSemantics()), "p", "e")
	s = AdvanceClock(s, time.Microsecond)
	s = committed(t, s, "q", "f")
	u := ClaimUnknown(s)
	rows := map[string]Row{}
	for _, id := range []string{"e", "f"} {
		r := s.Rows[id]
		r.Status, r.Attempts, r.ClaimID, r.ClaimExpiresAt = Publishing, 1, "new", s.Now.Add(time.Minute)
		rows[id] = r
	}
	got, ps := Observe(u, Observed{Rows: rows}, false)
	wantNone(t, ps)
	if !got.Claims["new"] {
		t.Fatal("the adopted claim_id was not recorded as handed out")
	}
}

// A row marked PUBLISHED inside Publish is allowed once the broker has the
// event (and only for the claim that just published); marked without the
// broker ever having it, the event is lost.
func TestPublishedOnlyAfterTheBrokerHasIt(t *testing.T) {
	s := New(t0, SeedSemantics())
	s = committed(t, s, "p", "e")
	s, _ = claim(t, s, "k", 1, Claimed{ID: "e", Attempts: 1})
	early := s.Rows["e"]
	early.Status, early.ClaimID, early.ClaimExpiresAt, early.PublishedAt = Published, "", time.Time{}, t0
	rows := map[string]Row{"e": early}

	_, ps := Observe(s, Observed{Rows: rows, Published: "k"}, false)
	wantProblem(t, ps, NoLoss)

	sent, ps := Publish(s, "e", "")
	wantNone(t, ps)
	after, ps := Observe(sent, Observed{Rows: rows, Published: "k"}, false)
	wantNone(t, ps)
	_, ps = MarkPublished(after, "e", "k", false, Done)
	wantNone(t, ps) // the claim's own mark now finds the row already done

	_, ps = Observe(sent, Observed{Rows: rows, Published: "other"}, false)
	wantProblem(t, ps, ModelAgreement)
}
