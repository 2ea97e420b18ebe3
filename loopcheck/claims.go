package loopcheck

import (
	"fmt"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// ClaimReporter is a Subject whose relays report their claims and the
// updates that complete them, through the Publisher each relay is given
// (it is also a ClaimLog). fencing is then judged from the reports: a
// claim that another relay took over while it still held the event (its
// lease had run out) must change nothing when it completes. Returning
// false is the same as not implementing it.
type ClaimReporter interface {
	ReportsClaims() bool
}

// ClaimLog is what every relay's Publisher also is: where a
// ClaimReporter's relay reports its claims and completions, as its
// database reported them to it.
type ClaimLog interface {
	// Claimed: the relay took event under claim, an id new to this
	// claim (one claim may take several events). over is the claim it
	// took the event over from: the one still holding the event, its
	// lease run out, not completed; "" if none did.
	Claimed(event, claim, over string)
	// Completed: the relay's update that ends claim on event (marked
	// published, failed or due again, dead, handed back) committed, and
	// changed says whether it changed the event's row. Report only an
	// update whose outcome is known: never one whose reply was lost.
	Completed(event, claim string, changed bool)
}

// claimNote is one report of a relay's: a claim, or a completion.
type claimNote struct {
	event, claim, over string
	completed, changed bool
	relay              string
	at                 time.Duration // since the schedule's start
}

func (p *publisher) Claimed(event, claim, over string) {
	p.b.note(claimNote{event: event, claim: claim, over: over, relay: p.relay})
}

func (p *publisher) Completed(event, claim string, changed bool) {
	p.b.note(claimNote{event: event, claim: claim, completed: true, changed: changed, relay: p.relay})
}

// note records n, and wakes whoever waits for a report.
func (b *broker) note(n claimNote) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n.at = time.Since(b.start)
	b.claims = append(b.claims, n)
	if b.noted != nil {
		close(b.noted)
		b.noted = nil
	}
}

// claimNotes are the reports so far, in the order they came, and a
// channel closed at the next one.
func (b *broker) claimNotes() ([]claimNote, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.noted == nil {
		b.noted = make(chan struct{})
	}
	return append([]claimNote(nil), b.claims...), b.noted
}

// awaitCompletion waits, at most d, for relay's report of a completion
// of event made after from (since the schedule's start): a thawed relay's
// report of the claim it held while frozen, which the end state, read at
// once, would otherwise be judged before. It says whether one came.
func (c *check) awaitCompletion(relay, event string, from, d time.Duration) bool {
	deadline := time.After(d)
	for {
		notes, next := c.bro.claimNotes()
		for _, n := range notes {
			if n.completed && n.relay == relay && n.event == event && n.at >= from {
				return true
			}
		}
		select {
		case <-next:
		case <-deadline:
			return false
		case <-c.abort:
			return false
		case <-c.opts.Interrupt:
			return false
		}
	}
}

// fencing: where the subject reports its claims, no claim that another
// relay took over changes the event's row when it completes. A
// completion that changed the row came after the takeover: the takeover
// found the claim still holding the event, and a completion that had
// changed the row would have ended it. So the order the reports came in
// does not matter, and no clock is read.
func (c *check) fencing(endState) *harness.Failure {
	if cr, ok := capability[ClaimReporter](c.subj); !ok || !cr.ReportsClaims() {
		return nil
	}
	type key struct{ event, claim string }
	notes, _ := c.bro.claimNotes()
	claims, takenBy := map[key]int{}, map[key]claimNote{}
	for _, n := range notes {
		if n.completed {
			continue
		}
		claims[key{n.event, n.claim}]++
		if k := (key{n.event, n.over}); n.over != "" && n.over != n.claim { // a claim over itself is no takeover
			if _, seen := takenBy[k]; !seen {
				takenBy[k] = n
			}
		}
	}
	judged := 0
	defer func() { c.judged.atEnd("fencing", judged) }()
	for _, n := range notes {
		k := key{n.event, n.claim}
		// A claim id reported twice for one event cannot say which of
		// the two claims completed.
		if !n.completed || !n.changed || claims[k] > 1 {
			continue
		}
		judged++
		if by, ok := takenBy[k]; ok {
			return c.fail("fencing", fmt.Sprintf("event %s%s: claim %s (%s) was taken over by claim %s (%s, reported at %v), and its completion (reported at %v) still changed the row: a stale claimant overwrote a newer claim",
				n.event, c.paymentOf(n.event), n.claim, n.relay, by.claim, by.relay, by.at.Round(time.Millisecond), n.at.Round(time.Millisecond)))
		}
	}
	return nil
}

// paymentOf is " of <payment>" for an event the broker saw, else "".
func (c *check) paymentOf(event string) string {
	for _, a := range c.bro.record() {
		if a.EventID == event {
			return " of " + a.PaymentID
		}
	}
	return ""
}
