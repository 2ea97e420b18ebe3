package loopcheck

import (
	"fmt"
	"time"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
)

// Takeover is a Subject whose relays take over an event another relay
// claimed and then went silent on: a relay cut off mid-publish, for good,
// whatever it holds (a claim with a lease, row locks, an advisory lock, a
// transaction), does not keep its event from the others for longer than
// TakeoverBound. A lease does it when it runs out; a claim held by a
// transaction's locks needs the server to end the silent session (an
// idle_in_transaction_session_timeout, a TCP keepalive). A subject whose
// design has no takeover returns 0: takeover is then not applicable.
type Takeover interface {
	TakeoverBound() time.Duration
}

// strand cuts a relay off in mid-publish for good: as the wedge step,
// the harness commits a payment, stops the first publish any live relay
// makes on its way to the broker and severs that relay's link (its
// server sessions, transactions and locks stay); but the publish never
// reaches the broker, and the link is not healed before the takeover
// check: a relay whose machine was cut off from the network. The drain
// ends the publish (refused) and heals the link. For a subject that
// declares a takeover bound, another relay must then carry the stranded
// event within it (takeover).
func (c *check) strand() *harness.Failure {
	h, got, ok := c.catchPublish("Strand", "nothing stranded")
	if !ok {
		return nil
	}
	c.strands = append(c.strands, h)
	link := dispatcher(got.index).String()
	err := c.net.Inject(link, faults.Fault{Kind: faults.Sever})
	locked, inTx := c.inTransaction(dispatcher(got.index))
	c.tally.injected("strand", link, err == nil, btoi(err == nil && locked))
	if err != nil {
		c.record("Strand", link, got.relay, "error: "+err.Error())
		return nil
	}
	c.tally.partition(link, faults.Sever)
	c.dispatcherFaults++
	c.disturb(link, false)
	c.record("Strand", link, fmt.Sprintf("%s, publishing %s of %s", got.relay, got.msg.ID, got.msg.AggregateID),
		"link severed mid-publish ("+inTx+"); the publish never reaches the broker")
	return c.takeover(got.index, got.msg.AggregateID)
}

// takeover's check: with relay stranded mid-publish of pay's event,
// another relay carries it within the declared TakeoverBound. Judged only
// while a correct outbox can: another relay running on a healthy link,
// the broker up, prompt and not refusing pay.
func (c *check) takeover(stranded int, pay string) *harness.Failure {
	tk, ok := capability[Takeover](c.subj)
	if !ok || tk.TakeoverBound() <= 0 || c.opts.Dispatchers < 2 {
		return nil
	}
	if why := c.unprobeable(stranded, pay); why != "" {
		c.record("Takeover", "operator", pay, "not judged: "+why)
		return nil
	}
	c.judged.step("takeover")
	bound, start := tk.TakeoverBound(), time.Now()
	if c.carriedWithin(pay, bound) {
		c.record("Takeover", "operator", pay, fmt.Sprintf("carried by another relay %v after the strand", time.Since(start).Round(time.Millisecond)))
		return nil
	}
	if c.abandoned() {
		return nil
	}
	c.record("Takeover", "operator", pay, fmt.Sprintf("not carried within %v", bound))
	return c.fail("takeover", fmt.Sprintf("with %s cut off for good mid-publish of %s, no other relay published it within the declared bound %v (another relay was running on a healthy link, the broker up): whatever the stranded relay holds keeps the event from the others",
		dispatcher(stranded), pay, bound))
}

// endStrands ends every stranded publish: refused, as the relay's cut
// link would end it. The drain's, and the schedule's end.
func (c *check) endStrands() {
	for _, h := range c.strands {
		h.drop()
	}
	c.strands = nil
}
