package loopcheck

import (
	"fmt"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// headOfLine commits a payment the broker refuses for ever (for 3
// publishes, for a subject that shows no dead letters), then another,
// the probe: while the first is refused, the probe must be carried
// within GiveUp and Recovery of its commit (head-of-line). A relay that
// delivers in commit order may hold the probe back until it gave up on
// the first, not longer: one refused event must not stop the outbox.
// First a control payment must be carried within Recovery: an outbox
// that delivers nothing now, poison or not, is not held up by the
// poison (that is timely-delivery's to judge).
func (c *check) headOfLine() *harness.Failure {
	c.produce(true)
	control := fmt.Sprintf("pay-%d", c.pays)
	if why := c.unprobeable(-1, control); why != "" || !c.paid[control] || !c.carriedWithin(control, c.opts.Recovery) {
		if why == "" {
			why = "the control payment " + control + " was not carried within Recovery: the outbox delivers nothing now, poison or not"
		}
		c.tally.injected("head-of-line", "broker", false, 0)
		c.record("HeadOfLine", "operator", control, "not judged: "+why)
		return nil
	}
	c.poison(Step{Kind: "poison", N: 1})
	c.produce(true)
	head := fmt.Sprintf("pay-%d", c.pays)
	c.produce(true)
	probe := fmt.Sprintf("pay-%d", c.pays)
	why := c.unprobeable(-1, probe)
	switch {
	case !c.paid[head] || !c.paid[probe]:
		why = "a commit failed"
	case !c.bro.refusing(head):
		why = head + " is no longer refused"
	}
	c.tally.injected("head-of-line", "broker", why == "", 0)
	if why != "" {
		c.record("HeadOfLine", "operator", probe, "not judged: "+why)
		return nil
	}
	c.judged.step("head-of-line")
	bound, start := c.opts.GiveUp+c.opts.Recovery, time.Now()
	if c.carriedWithin(probe, bound) {
		c.record("HeadOfLine", "operator", probe, fmt.Sprintf("carried %v after its commit, %s refused", time.Since(start).Round(time.Millisecond), head))
		return nil
	}
	if c.abandoned() {
		return nil
	}
	c.record("HeadOfLine", "operator", probe, fmt.Sprintf("not carried within %v", bound))
	return c.fail("head-of-line", fmt.Sprintf("with %s refused by the broker, %s, committed after it, was not published within %v (GiveUp %v and Recovery %v; a relay was running on a healthy link, the broker up): one refused event holds up the others",
		head, probe, bound, c.opts.GiveUp, c.opts.Recovery))
}

// carriedWithin waits up to d for the broker to accept pay's event; it
// says whether it did (false also when the schedule is abandoned).
func (c *check) carriedWithin(pay string, d time.Duration) bool {
	for start := time.Now(); time.Since(start) <= d; time.Sleep(10 * time.Millisecond) {
		if c.carried(pay) {
			return true
		}
		if c.abandoned() {
			return false
		}
	}
	return c.carried(pay)
}
