package loopcheck

import (
	"fmt"
	"time"
)

// brokerDown takes the broker down for d of real time. Unless the subject
// shows its dead letters, the schedule's downtime in all stays within the
// retry budget (Env.RetryBudget): a correct subject may give up after it.
// The story says when the outage ends (BrokerUp), unless a broker-up step
// or the drain ends it first.
func (c *check) brokerDown(d time.Duration) {
	input := "for " + d.String()
	if _, ok := capability[DeadLetterer](c.subj); !ok {
		left := c.opts.RetryBudget - c.downtime
		if d > left {
			d = max(left, 0)
			input += fmt.Sprintf(", cut to %v: the retry budget's rest (the subject shows no dead letters)", d)
		}
	}
	added := c.bro.downFor(d)
	c.downtime += added
	c.tally.outage(added)
	res := ""
	if !c.bro.down() {
		res = "skipped: the broker stays up"
	}
	c.record("BrokerDown", "broker", input, res)
	if until, ok := c.bro.downUntilNow(); ok && added > 0 {
		c.announce(until, func() bool { return c.bro.outageOver(until) }, "BrokerUp", fmt.Sprintf("the outage is over (%v)", d))
	}
}

// brokerSlow opens a slow-broker window and commits st.N payments into
// it, so that it is met; the story says when the window ends. The first
// accepted publish of each of those payments is acknowledged as late
// whenever it comes (the broker was slow when it came): a relay that is
// slow to claim them on a loaded machine, or busy with a publish still,
// meets the window all the same, in the batch they were committed as.
// They are marked before the commit, so no publish of them escapes.
func (c *check) brokerSlow(st Step) {
	until := c.bro.slowFor(st.For, st.Delay, st.Aim)
	c.disturbFor(st.For + st.Delay + c.opts.Lease)
	c.record("BrokerSlow", "broker", fmt.Sprintf("for %v: every accepted publish acknowledged %s late, as is the first of each payment committed into it, whenever it comes", st.For, aimText(st.Delay, st.Aim)), "")
	c.announce(until, func() bool { return c.bro.slowOver(until) }, "BrokerPrompt",
		"the slow window is over (acknowledgements already late still come late)")
	if st.N > 0 {
		ps := c.newPayments(st.N)
		for _, p := range ps {
			c.bro.slowFirst(p.ID)
		}
		c.write(ps, true)
	}
}

// announce records action by the broker at until, if over says then that
// the window ending at until did (no later step ended or replaced it).
func (c *check) announce(until time.Time, over func() bool, action, input string) {
	c.timersMu.Lock()
	defer c.timersMu.Unlock()
	c.timers = append(c.timers, time.AfterFunc(time.Until(until), func() {
		if over() {
			c.record(action, "broker", input, "")
		}
	}))
}

// stopTimers drops the announcements still to come: the schedule is over.
func (c *check) stopTimers() {
	c.timersMu.Lock()
	defer c.timersMu.Unlock()
	for _, t := range c.timers {
		t.Stop()
	}
	c.timers = nil
}
