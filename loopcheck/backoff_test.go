package loopcheck

import (
	"testing"
	"time"
)

// declared is a subject that declares the reference's backoff: 40 ms
// after the first failure, 80 ms after the second.
type declared struct{ Subject }

func (declared) MinBackoff(k int) time.Duration { return 20 * time.Millisecond << min(k, 4) }

func judgeBackoff(as []Attempt, ws ...window) string {
	return judgeBegun(0, as, ws...)
}

// judgeBegun judges as for a payment begun at begun, with a 1 s lease.
func judgeBegun(begun time.Duration, as []Attempt, ws ...window) string {
	c := &check{runner: &runner{subj: declared{}, opts: Options{Lease: time.Second}}, bro: &broker{attempts: as},
		disturbances: ws, begun: map[string]time.Duration{"pay-1": begun}}
	if f := c.backoff(); f != nil {
		return f.Message
	}
	return ""
}

func attempt(at time.Duration, outcome, relay string) Attempt {
	return Attempt{EventID: "e1", PaymentID: "pay-1", At: at, Relay: relay, Outcome: outcome}
}

// The judge of backoff: a retry sooner than declared fails; the same
// retry is not judged when a relay may have been cut off, or may have
// published an older claim on a slow broker; a refusal the subject may
// never have recorded does not raise what is asked of the next.
func TestBackoffJudge(t *testing.T) {
	ms := time.Millisecond
	soon := []Attempt{attempt(0, "down", "d0#1"), attempt(20*ms, "accepted", "d1#1")}
	if judgeBackoff(soon) == "" {
		t.Error("a retry 20 ms after a refusal, declared 40 ms, passed")
	}
	if got := judgeBackoff(soon, window{from: 10 * ms, to: 10 * ms}); got != "" {
		t.Errorf("a retry across a kill was judged: %s", got)
	}
	if got := judgeBackoff(soon, window{from: -time.Second, to: 5 * ms}); got != "" {
		t.Errorf("a retry in a slow-broker window was judged: %s", got)
	}
	expired := []Attempt{{EventID: "e1", At: 0, Outcome: "down", Expired: true}, attempt(20*ms, "accepted", "d1#1")}
	if got := judgeBackoff(expired); got != "" {
		t.Errorf("a refusal on an expired call was judged: %s", got)
	}
	if got := judgeBackoff(soon[:1]); got != "" {
		t.Errorf("one attempt was judged: %s", got)
	}
	// Refused, cut off (unrecorded), refused, retried 50 ms later: one
	// failure surely recorded, so 40 ms is asked, not 80.
	lost := []Attempt{attempt(0, "down", "d0#1"), attempt(400*ms, "down", "d1#1"), attempt(450*ms, "accepted", "d1#1")}
	if got := judgeBackoff(lost, window{from: 100 * ms, to: 100 * ms}); got != "" {
		t.Errorf("an unrecorded failure raised the backoff asked: %s", got)
	}
	if judgeBackoff(lost) == "" {
		t.Error("50 ms after a second recorded failure, declared 80 ms, passed")
	}
	// A lease or more after the payment began, a retry may be a slow
	// relay's older claim, published after another's refusal: not judged.
	late := []Attempt{attempt(1400*ms, "poison", "d1#2"), attempt(1406*ms, "poison", "d0#1")}
	if got := judgeBegun(400*ms, late); got != "" {
		t.Errorf("a retry a lease after the payment began was judged: %s", got)
	}
	if judgeBegun(500*ms, late) == "" {
		t.Error("a retry 6 ms after a refusal, within the first lease, passed")
	}
	if got := (&check{runner: &runner{opts: Options{Lease: time.Second}}}).withinFirstLease(late[0]); got {
		t.Error("an attempt on a payment the harness never began counted as within its first lease")
	}
}

// A payment its subject lists as dead twice was dead-lettered twice.
func TestDeadLetteredTwice(t *testing.T) {
	c := &check{runner: &runner{subj: declared{}}, bro: &broker{}, voided: map[string]bool{}}
	if f := c.safety(endState{dead: map[string]bool{"pay-1": true}, deadTwice: repeated([]string{"pay-1", "pay-2", "pay-1"})}); f == nil || f.Property != "dead-exclusive" {
		t.Fatalf("a payment dead-lettered twice: %+v", f)
	}
	if f := c.safety(endState{dead: map[string]bool{"pay-1": true}, deadTwice: repeated([]string{"pay-1", "pay-2"})}); f != nil {
		t.Fatalf("one dead letter each: %+v", f)
	}
}
