package loopcheck

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
)

// Deduper is a Subject whose relays lean on the real broker's
// deduplication to store each event once (JetStream's Nats-Msg-Id, the
// event's id): a relay resends an event it is not sure of, and the
// broker drops the copy, but only within its dedupe window, counted
// from the copy it stored. So a relay that leans on it must not send an
// event again later than Env.DedupeWindow − Env.WireHold after its first
// send of it; an event it cannot get acknowledged by then it must give
// up on, visibly (dead), not send again. Judged at the end with a real
// broker (Options.JetStream): dedupe-window.
type Deduper interface {
	LeansOnDedupe() bool
}

// WireHold is Env.WireHold: how long the harness's wire to a real broker
// may hold a message before it arrives, its longest broker-link fault
// (a partition holds a publish until it heals) and a second's margin
// for a heal that comes late on a loaded machine.
const WireHold = maxBrokerLinkFault + time.Second

// leansOnDedupe says whether the run judges dedupe-window: a real broker,
// and a subject that declares it leans on its window.
func (r *runner) leansOnDedupe() bool {
	d, ok := capability[Deduper](r.subj)
	return r.js != nil && ok && d.LeansOnDedupe()
}

// dedupeWindow: where the subject leans on the broker's deduplication,
// no event is stored twice by a resend later than the window allows.
// Harm and blame both: the stream holds the event twice (so a copy
// arrived a window or more after the one stored before it), and a relay
// sent it again later than DedupeWindow − WireHold after the first send
// that may have stored it (accepted, or its ack lost). A copy no late
// send explains came from a hold of the harness's own, beyond what
// WireHold allows: not the subject's, and not judged. The send time is
// the attempt's, less what the harness held it back (a freeze).
func (c *check) dedupeWindow() *harness.Failure {
	if !c.runner.leansOnDedupe() {
		return nil
	}
	copies := map[string]int{}
	for _, m := range c.bro.messages() {
		copies[m.ID]++
	}
	sends := map[string][]Attempt{}
	for _, a := range c.bro.record() {
		switch a.Outcome {
		case "accepted", "accepted-late", "ack-lost", "no-reply":
			sends[a.EventID] = append(sends[a.EventID], a)
		}
	}
	allowed := c.opts.DedupeWindow - WireHold
	judged := 0
	defer func() { c.judged.atEnd("dedupe-window", judged) }()
	for _, id := range slices.Sorted(maps.Keys(sends)) {
		judged++
		if copies[id] < 2 {
			continue
		}
		ss := sends[id]
		first := ss[0]
		for _, a := range ss {
			if a.At-a.Held < first.At-first.Held {
				first = a
			}
		}
		for _, a := range ss {
			if late := (a.At - a.Held) - (first.At - first.Held); late > allowed {
				return c.fail("dedupe-window", fmt.Sprintf("event %s of payment %s is stored %d times: %s sent it again %v after %s's first send that may have stored it, past the %v dedupe window less the wire's %v hold (%v)",
					id, a.PaymentID, copies[id], a.Relay, late.Round(time.Millisecond), first.Relay, c.opts.DedupeWindow, WireHold, allowed))
			}
		}
	}
	return nil
}

// windowOutage is the outage a broker's deduplication does not cover:
// the harness commits a payment, lets the first publish of it reach the
// real broker but loses its ack (the stream holds it; the relay does not
// know), and cuts every relay's link (a long partition) for the dedupe
// window and st.For more; then it heals them. A relay that resends
// the event now has it stored twice; one that leans on the window must
// give up on it instead (Deduper: dedupe-window). Any outbox is at most
// slowed; an at-least-once one publishes it again, and its consumer
// dedupes it. Drawn only with a real broker (Options.JetStream).
func (c *check) windowOutage(st Step) {
	if c.runner.js == nil {
		c.record("WindowOutage", "broker", st.String(), "skipped: the broker is the harness's own (Options.JetStream is off)")
		return
	}
	h, got, ok := c.catchPublish("WindowOutage", "nothing cut off")
	if !ok {
		return
	}
	var cut []string
	for i := range c.opts.Dispatchers {
		link := dispatcher(i).String()
		if err := c.net.Inject(link, faults.Fault{Kind: faults.Sever}); err != nil {
			c.record("WindowOutage", link, st.String(), "error: "+err.Error())
			continue
		}
		c.tally.partition(link, faults.Sever)
		c.disturb(link, false)
		cut = append(cut, link)
	}
	c.dispatcherFaults++
	d := c.opts.DedupeWindow + st.For
	h.loseAck = true
	close(h.release)
	c.tally.injected("window-outage", "broker", true, len(cut))
	c.record("WindowOutage", "broker", fmt.Sprintf("%s, publishing %s of %s", got.relay, got.msg.ID, got.msg.AggregateID),
		fmt.Sprintf("its publish stored and its ack lost; %d relay links severed for %v (the dedupe window and %v)", len(cut), d, st.For))
	select {
	case <-time.After(d):
	case <-c.abort:
	case <-c.opts.Interrupt:
	}
	for _, link := range cut {
		c.net.Heal(link)
		c.calm(link)
	}
	c.record("Heal", "dispatchers", fmt.Sprintf("%d links", len(cut)), "")
}
