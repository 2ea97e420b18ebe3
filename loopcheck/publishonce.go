package loopcheck

import (
	"fmt"
	"strings"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// OncePublisher is a Subject that declares its relays publish each event
// at most once while nothing made a publish of it ambiguous: its claims
// exclude each other for as long as a publish takes (row locks held
// through the publish, a fencing token the broker checks), not for a
// lease that a relay stalled on a loaded machine can outlive. Returning
// false is the same as not implementing it.
type OncePublisher interface {
	PublishesOnce() bool
}

// publishOnce: where the subject declares it, no event is accepted by the
// broker twice, unless a publish of it was ambiguous (an ack lost, or
// late past the publisher's own deadline) or the schedule had a
// dispatcher fault (a kill, stop, crash, wedge or strand of a relay, a
// fault on its link: it may have published and never recorded it).
// Duplicate publishes are counted for every subject (the coverage line);
// only a declared one is judged by them.
func (c *check) publishOnce(endState) *harness.Failure {
	if op, ok := capability[OncePublisher](c.subj); !ok || !op.PublishesOnce() || c.dispatcherFaults > 0 {
		return nil
	}
	accepted, unsure, relays, pays := map[string]int{}, map[string]bool{}, map[string][]string{}, map[string]string{}
	var order []string
	for _, a := range c.bro.record() {
		switch {
		case a.Outcome == "ack-lost" || a.Outcome == "no-reply" || a.Outcome == "accepted-late" && (a.GaveUp || a.Expired):
			unsure[a.EventID] = true
		case a.Outcome == "accepted" || a.Outcome == "accepted-late":
		default:
			continue
		}
		if accepted[a.EventID] == 0 {
			order = append(order, a.EventID)
		}
		accepted[a.EventID]++
		pays[a.EventID] = a.PaymentID
		relays[a.EventID] = append(relays[a.EventID], fmt.Sprintf("%s at %v", a.Relay, a.At.Round(time.Millisecond)))
	}
	judged := 0
	defer func() { c.judged.atEnd("publish-at-most-once", judged) }()
	for _, id := range order {
		if unsure[id] {
			continue
		}
		judged++
		if accepted[id] > 1 {
			return c.fail("publish-at-most-once", fmt.Sprintf("event %s of %s was published %d times (%s), with no ack of it lost or given up on, and no relay killed, stopped, crashed or cut off and no dispatcher link faulted: the relays' claims did not exclude each other",
				id, pays[id], accepted[id], strings.Join(relays[id], ", ")))
		}
	}
	return nil
}
