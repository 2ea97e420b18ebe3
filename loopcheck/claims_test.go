package loopcheck

import (
	"strings"
	"testing"
	"time"
)

// reporting is a subject whose relays report their claims, or say they
// do not.
type reporting struct {
	Subject
	reports bool
}

func (s reporting) ReportsClaims() bool { return s.reports }

// fencingOf judges fencing on the reports the relays make through
// report, in that order, for a subject that reports claims or not.
func fencingOf(t *testing.T, reports bool, report func(r1, r2 *publisher)) (string, int) {
	t.Helper()
	c := &check{runner: &runner{subj: reporting{reports: reports}}, bro: newBroker(time.Now())}
	r1 := &publisher{b: c.bro, relay: "dispatcher-0#1"}
	r2 := &publisher{b: c.bro, relay: "dispatcher-1#1"}
	report(r1, r2)
	f := c.fencing(endState{})
	n := c.judged.end["fencing"]
	if f == nil {
		return "", n
	}
	if f.Property != "fencing" {
		t.Fatalf("failed %s, not fencing: %s", f.Property, f.Message)
	}
	return f.Message, n
}

// A stale claim whose completion still changed the row fails fencing,
// whatever order the reports came in: the takeover found the claim
// holding the event, so the change came after it. A fenced completion
// (it changed nothing), a claim not taken over, a claim id reported twice
// for one event, or a subject that does not report claims, does not.
func TestFencingJudgesStaleCompletions(t *testing.T) {
	stale, n := fencingOf(t, true, func(r1, r2 *publisher) {
		r1.Claimed("ev-1", "c1", "")
		r2.Claimed("ev-1", "c2", "c1")
		r2.Completed("ev-1", "c2", true)
		r1.Completed("ev-1", "c1", true)
	})
	if !strings.Contains(stale, "claim c1 (dispatcher-0#1) was taken over by claim c2 (dispatcher-1#1") || n != 2 {
		t.Fatalf("a stale completion that changed the row: %q, %d judged", stale, n)
	}
	early, _ := fencingOf(t, true, func(r1, r2 *publisher) {
		r1.Claimed("ev-1", "c1", "")
		r1.Completed("ev-1", "c1", true) // its report came first; the takeover still came before its update
		r2.Claimed("ev-1", "c2", "c1")
	})
	if early == "" {
		t.Fatal("a stale completion reported before the takeover was not judged")
	}
	for name, report := range map[string]func(r1, r2 *publisher){
		"fenced": func(r1, r2 *publisher) {
			r1.Claimed("ev-1", "c1", "")
			r2.Claimed("ev-1", "c2", "c1")
			r1.Completed("ev-1", "c1", false)
			r2.Completed("ev-1", "c2", true)
		},
		"not taken over": func(r1, r2 *publisher) {
			r1.Claimed("ev-1", "c1", "")
			r1.Completed("ev-1", "c1", true)
			r2.Claimed("ev-1", "c2", "")
			r2.Completed("ev-1", "c2", true)
		},
		"another event": func(r1, r2 *publisher) {
			r1.Claimed("ev-1", "c1", "")
			r2.Claimed("ev-2", "c2", "c1")
			r1.Completed("ev-1", "c1", true)
		},
		"over itself": func(r1, r2 *publisher) {
			r1.Claimed("ev-1", "c1", "c1")
			r1.Completed("ev-1", "c1", true)
		},
		"claim id twice": func(r1, r2 *publisher) {
			r1.Claimed("ev-1", "c1", "")
			r2.Claimed("ev-1", "c2", "c1")
			r1.Claimed("ev-1", "c1", "c2")
			r1.Completed("ev-1", "c1", true)
		},
	} {
		if msg, _ := fencingOf(t, true, report); msg != "" {
			t.Errorf("%s: %s", name, msg)
		}
	}
	if msg, n := fencingOf(t, false, func(r1, r2 *publisher) {
		r1.Claimed("ev-1", "c1", "")
		r2.Claimed("ev-1", "c2", "c1")
		r1.Completed("ev-1", "c1", true)
	}); msg != "" || n != 0 {
		t.Fatalf("judged for a subject that does not report claims: %q, %d", msg, n)
	}
}

// A thawed relay's completion is awaited: it comes, or the wait ends.
func TestAwaitCompletion(t *testing.T) {
	c := &check{runner: &runner{}, bro: newBroker(time.Now())}
	r1 := &publisher{b: c.bro, relay: "dispatcher-0#1"}
	r1.Completed("ev-1", "c0", true) // before the thaw: not it
	from := time.Since(c.bro.start)
	go func() { time.Sleep(20 * time.Millisecond); r1.Completed("ev-1", "c1", false) }()
	if !c.awaitCompletion("dispatcher-0#1", "ev-1", from, time.Minute) {
		t.Fatal("the completion reported after the thaw was not seen")
	}
	if c.awaitCompletion("dispatcher-1#1", "ev-1", from, 10*time.Millisecond) {
		t.Fatal("another relay's wait ended with a completion it never made")
	}
}
