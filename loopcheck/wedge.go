package loopcheck

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
)

// wedgeWait is how long the wedge step waits for a relay to publish.
const wedgeWait = time.Second

// wedge cuts a relay off in mid-publish, holding whatever it holds: the
// harness commits a payment (the bait), stops the first publish any live
// relay makes on its way to the broker, severs that relay's link (a long
// partition: its server session, its transaction and its locks stay),
// and only then lets the publish through. A relay that publishes inside
// its claim's transaction is now cut off with its row locks held; one
// that claims, commits and then publishes holds nothing. Then, for a
// subject that declares relay isolation, it probes the others.
func (c *check) wedge() *harness.Failure {
	h, got, ok := c.catchPublish("Wedge", "nothing wedged")
	if !ok {
		return nil
	}
	link := dispatcher(got.index).String()
	err := c.net.Inject(link, faults.Fault{Kind: faults.Sever})
	locked, inTx := c.inTransaction(dispatcher(got.index))
	close(h.release)
	c.tally.injected("wedge", link, err == nil, btoi(err == nil && locked))
	if err != nil {
		c.record("Wedge", link, got.relay, "error: "+err.Error())
		return nil
	}
	c.tally.partition(link, faults.Sever)
	c.tally.wedge()
	c.dispatcherFaults++
	c.disturb(link, false)
	c.record("Wedge", link, fmt.Sprintf("%s, publishing %s of %s", got.relay, got.msg.ID, got.msg.AggregateID),
		"link severed mid-publish ("+inTx+"), then the publish let through")
	return c.probe(got.index)
}

// catchPublish commits a payment (the bait) and stops the first publish
// any live relay makes on its way to the broker; ok is false, with the
// story and the coverage saying so (as action's, "what"), when none
// came within wedgeWait.
func (c *check) catchPublish(action, what string) (h *hold, got heldPublish, ok bool) {
	return c.catchPublishOf(1, action, what)
}

// catchPublishOf is catchPublish with n payments for bait, committed in
// one transaction (a relay claims them as one batch).
func (c *check) catchPublishOf(n int, action, what string) (h *hold, got heldPublish, ok bool) {
	h = c.bro.holdNext()
	c.produceN(n, true)
	select {
	case got = <-h.held:
		return h, got, true
	case <-time.After(wedgeWait):
		c.bro.unhold(h)
		c.tally.injected(strings.ToLower(action), noRelay, false, 0)
		c.record(action, "operator", "", fmt.Sprintf("no relay published within %v: %s", wedgeWait, what))
		return nil, got, false
	}
}

// inTransaction says whether actor a's server sessions hold an open
// transaction that has locked or written rows (an xid), and in words,
// for the story.
func (c *check) inTransaction(a harness.Actor) (bool, string) {
	var n int
	err := c.call(func(ctx context.Context) error {
		return c.admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = $1 AND backend_xid IS NOT NULL`, appName(a)).Scan(&n)
	})
	switch {
	case err != nil:
		return false, "its sessions unread: " + err.Error()
	case n > 0:
		return true, fmt.Sprintf("%d of its sessions in a transaction holding row locks", n)
	}
	return false, "it holds no transaction"
}

// probe is relay-isolation's check: with relay wedged cut off, a payment
// committed now is carried by another relay within the subject's
// declared IsolationBound. It is judged only while that can be asked of
// a correct outbox: another relay running on a healthy link, the
// producer's link healthy, the broker up, prompt and not refusing it.
func (c *check) probe(wedged int) *harness.Failure {
	iso, ok := capability[Isolated](c.subj)
	if !ok || c.opts.Dispatchers < 2 {
		return nil
	}
	if why := c.unprobeable(wedged, fmt.Sprintf("pay-%d", c.pays+1)); why != "" {
		c.tally.unprobed(why)
		c.record("Probe", "operator", "relay-isolation", "not judged: "+why)
		return nil
	}
	c.produce(true)
	pay := fmt.Sprintf("pay-%d", c.pays)
	if !c.paid[pay] {
		c.tally.unprobed("the probe's commit failed")
		c.record("Probe", "operator", "relay-isolation", "not judged: the probe's commit failed")
		return nil
	}
	c.judged.step("relay-isolation")
	bound, start := iso.IsolationBound(), time.Now()
	for time.Since(start) <= bound {
		if c.carried(pay) {
			c.tally.probe()
			c.record("Probe", "operator", "relay-isolation: "+pay, fmt.Sprintf("carried %v after its commit", time.Since(start).Round(time.Millisecond)))
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.record("Probe", "operator", "relay-isolation: "+pay, fmt.Sprintf("not carried within %v", bound))
	return c.fail("relay-isolation", fmt.Sprintf("with %s cut off mid-publish, no other relay published %s within the declared bound %v (another relay was running on a healthy link, the broker up)",
		dispatcher(wedged), pay, bound))
}

// unprobeable says why relay-isolation, takeover or head-of-line cannot
// be asked now of pay's event, or "".
func (c *check) unprobeable(wedged int, pay string) string {
	if c.net.Faulty(harness.Actor{Role: harness.Producer}.String()) {
		return "the producer's link is faulted"
	}
	// A transaction left open holds back the server's snapshot horizon,
	// which a relay that forwards in transaction order waits on, for a
	// reason that is not the probe's.
	if c.net.Faulty(consumer) {
		return "the consumer's link is faulted: a transaction it left open may hold back what a relay reads"
	}
	if c.holding.Load() > 0 {
		return "a held transaction is open: it may hold back what a relay reads"
	}
	// So may a relay cut off (other than the one wedged on purpose): its
	// open transaction, or a lock the relays take turns on (one forwarder
	// of a group at a time).
	for j := range c.relays {
		if l := dispatcher(j).String(); j != wedged && c.net.Faulty(l) {
			return l + "'s link is faulted: what it holds may hold back the other relays"
		}
	}
	if why := c.bro.blocked(pay); why != "" {
		return why
	}
	if c.healthyRelay(wedged) {
		return ""
	}
	return "no other relay runs on a healthy link"
}

// healthyRelay says whether a relay other than except runs on a healthy
// link.
func (c *check) healthyRelay(except int) bool {
	for j, rl := range c.relays {
		l := dispatcher(j).String()
		if j != except && rl != nil && !rl.returned() && !c.net.Faulty(l) && !c.net.IsDown(l) {
			return true
		}
	}
	return false
}

// carried says whether the broker has accepted pay's event.
func (c *check) carried(pay string) bool {
	for _, m := range c.bro.messages() {
		if m.AggregateID == pay {
			return true
		}
	}
	return false
}
