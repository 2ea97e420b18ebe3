package loopcheck

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// inFull is how many lost or late payments a failure message names in
// full, with what the harness saw of each; the rest it counts and ranges.
const inFull = 3

// liveness names the lost payments (no-loss) or, if none is lost, the late
// ones (timely-delivery), with how long the harness waited and why it
// stopped. The message summarises (counts, ranges in numeric order, the
// first few in full); every payment's outcome is kept for the report
// (Summary.Outcomes).
func (c *check) liveness(e endState, waited time.Duration) *harness.Failure {
	out := c.outcomes(e)
	byOutcome := map[Outcome][]string{}
	for _, pay := range byNumber(out) {
		byOutcome[out[pay]] = append(byOutcome[out[pay]], pay)
	}
	wait := fmt.Sprintf("waited %v after healing (stops after %v without progress, or at the hard bound %v)",
		waited.Round(time.Millisecond), c.opts.Recovery, cmp.Or(c.hardBound, c.opts.HardBound()).Round(time.Millisecond))
	tally := fmt.Sprintf("%d delivered, %d dead, %d pending, %d lost", len(byOutcome[Delivered]), len(byOutcome[Dead]),
		len(byOutcome[Pending]), len(byOutcome[Lost]))
	c.judged.atEnd("no-loss", 1)
	if lost := byOutcome[Lost]; len(lost) > 0 {
		c.keepOutcomes(e, out)
		return c.fail("no-loss", fmt.Sprintf("%s; %s; %s", c.lostText(e, lost, len(out)), tally, wait))
	}
	c.judged.atEnd("timely-delivery", 1)
	if late := byOutcome[Pending]; len(late) > 0 {
		c.keepOutcomes(e, out)
		return c.fail("timely-delivery", fmt.Sprintf("late: %d of %d committed payments still pending in the subject's outbox: %s; %s; %s",
			len(late), len(out), payRanges(late, maxRanges), tally, wait))
	}
	return nil
}

// lostText says which payments were lost, of committed: how many, their
// ranges, how many the broker never accepted and how many it carried
// without an effect, the first few in full, and what the subject does not
// show.
func (c *check) lostText(e endState, lost []string, committed int) string {
	carried := 0
	for _, pay := range lost {
		if e.carried[pay] {
			carried++
		}
	}
	var full []string
	for _, pay := range lost[:min(inFull, len(lost))] {
		full = append(full, pay+" ("+c.whyLost(e, pay)+")")
	}
	s := fmt.Sprintf("%d of %d committed payments lost (not delivered, not dead, not pending): ", len(lost), committed)
	if len(lost) <= inFull {
		s += strings.Join(full, ", ")
	} else {
		s += fmt.Sprintf("%s; %d never accepted by the broker, %d carried by it but never taking effect; first: %s",
			payRanges(lost, maxRanges), len(lost)-carried, carried, strings.Join(full, ", "))
	}
	if notes := unshown(e); notes != "" {
		s += "; " + notes
	}
	return s
}

// unshown says what the subject does not show: its dead letters, its
// pending events.
func unshown(e endState) string {
	var s []string
	if e.dead == nil {
		s = append(s, "the subject reports no dead letters")
	}
	if e.pending == nil {
		s = append(s, "the subject reports no pending list")
	}
	return strings.Join(s, "; ")
}

// whyLost says what the harness saw of a lost payment.
func (c *check) whyLost(e endState, pay string) string {
	if e.carried[pay] {
		return "the broker carried it; the consumer never took effect" + c.deliveries(pay)
	}
	tried := 0
	for _, a := range c.bro.record() {
		if a.PaymentID == pay {
			tried++
		}
	}
	switch {
	case tried == 0:
		return "never published: the broker saw no publish of it"
	case e.dead != nil && e.pending != nil:
		// The subject lists both, and it is in neither: it left the
		// outbox, refused, with no visible dead letter.
		return fmt.Sprintf("vanished without a visible dead letter: the broker accepted none of its %d publish attempts, and the subject lists it neither pending nor dead", tried)
	}
	return fmt.Sprintf("the broker accepted none of its %d publish attempts", tried)
}

// keepOutcomes keeps every committed payment's outcome in the end state
// that failed, in numeric order, for the report.
func (c *check) keepOutcomes(e endState, out map[string]Outcome) {
	c.runner.outcomes = nil
	for _, pay := range byNumber(out) {
		o := harness.PaymentOutcome{Payment: pay, Outcome: string(out[pay])}
		switch out[pay] {
		case Lost:
			o.Why = c.whyLost(e, pay)
		case Pending:
			o.Why = "still in the subject's outbox"
		case Dead:
			o.Why = "the subject shows it dead"
		}
		c.runner.outcomes = append(c.runner.outcomes, o)
	}
}

// deliveries says how the harness's deliveries of payment pay's events
// went: how many, how many acknowledged, and the last error.
func (c *check) deliveries(pay string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, acked := 0, 0
	var last error
	for _, m := range c.delivered {
		if m.AggregateID != pay {
			continue
		}
		n++
		if c.acked[m.ID] {
			acked = 1
		}
		if err := c.handleErr[m.ID]; err != nil {
			last = err
		}
	}
	s := fmt.Sprintf(" (delivered %d times, acknowledged %s", n, map[int]string{0: "never", 1: "once or more"}[acked])
	if last != nil {
		s += "; last error: " + strings.Join(strings.Fields(last.Error()), " ")
	}
	if k := len(c.delivered); n == 0 && k > 0 {
		m := c.delivered[k-1]
		s += fmt.Sprintf("; the consumer's last delivery, of %d, was %s's", k, m.AggregateID)
		if err := c.handleErr[m.ID]; err != nil && !c.acked[m.ID] {
			s += ": " + strings.Join(strings.Fields(err.Error()), " ")
		}
	}
	return s + ")"
}
