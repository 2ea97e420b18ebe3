package loopcheck

import (
	"fmt"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// backoffSlack is the stated tolerance of backoff: a retry may come this
// much, plus a tenth of the declared spacing, before MinBackoff says.
// It covers the broker's and the subject's clocks reading a few
// milliseconds apart, never a missing backoff.
const backoffSlack = 10 * time.Millisecond

// refused says a is a refusal the relay saw at once, on a live call:
// the broker down, the event poison, or the ack lost. After one, a
// correct subject records the failure and its backoff before it retries.
func refused(a Attempt) bool {
	return !a.Expired && (a.Outcome == "down" || a.Outcome == "poison" || a.Outcome == "ack-lost" || a.Outcome == "no-reply")
}

// backoff: after an event's k-th failed publish, its next publish comes
// no sooner than the subject's declared MinBackoff(k), less the slack.
// A pair is judged only if its retry could not have come from a claim
// older than the refusal:
//   - the first attempt was a prompt refusal (refused), so the subject
//     knew of the failure at once;
//   - no kill, stop, wedge, dispatcher partition or slow-broker window
//     fell between them: the failure was recorded unless something cut
//     the relay off, and then it is the lease, not the backoff, that
//     decides when the retry comes;
//   - the retry came within one lease of the payment's transaction
//     beginning (leaseBound). Two claims of one event before its
//     failure was recorded need a lease to expire in between, so a
//     relay that was merely slow (a stalled CPU, a long batch) and
//     publishes an older claim after another relay's refusal can only
//     do so a lease or more after the event could first be claimed.
func (c *check) backoff() *harness.Failure {
	b, ok := capability[Backoffer](c.subj)
	if !ok {
		return nil
	}
	perEvent := map[string][]Attempt{}
	var order []string
	for _, a := range c.bro.record() {
		if a.Outcome == "dead" || a.Outcome == "crashed" {
			continue // a killed incarnation's, refused by the harness; or one its event crashed: retried after its lease, not a backoff
		}
		if perEvent[a.EventID] == nil {
			order = append(order, a.EventID)
		}
		perEvent[a.EventID] = append(perEvent[a.EventID], a)
	}
	pairs := 0
	defer func() { c.judged.atEnd("backoff", pairs) }()
	for _, id := range order {
		n, f := c.spaced(b, perEvent[id])
		if pairs += n; f != nil {
			return f
		}
	}
	return nil
}

// spaced judges one event's attempts, in order. failures counts only the
// refusals the subject surely recorded (judged pairs): one it may have
// lost with a cut-off relay, or rolled back with a killed transaction,
// must not raise the backoff asked of a subject that counts attempts on
// failure. It returns how many pairs it judged.
func (c *check) spaced(b Backoffer, as []Attempt) (int, *harness.Failure) {
	failures := 0
	for i := 1; i < len(as); i++ {
		prev, a := as[i-1], as[i]
		if !refused(prev) || c.disturbed(prev.At, a.At) || !c.withinFirstLease(a) {
			continue
		}
		failures++
		want := b.MinBackoff(failures)
		if gap := a.At - prev.At; gap < want-backoffSlack-want/10 {
			return failures, c.fail("backoff", fmt.Sprintf("event %s of %s was retried by %s %v after its failure #%d (%s by %s), before its declared backoff of %v (tolerance %v + 10%%)",
				a.EventID, a.PaymentID, a.Relay, gap.Round(time.Millisecond), failures, prev.Outcome, prev.Relay, want, backoffSlack))
		}
	}
	return failures, nil
}

// withinFirstLease says whether attempt a came less than one lease after
// its payment's transaction began (a payment the harness did not begin
// is never judged).
func (c *check) withinFirstLease(a Attempt) bool {
	begun, ok := c.begun[a.PaymentID]
	return ok && a.At-begun < c.opts.Lease
}

// disturbed says whether a kill, stop, wedge, dispatcher partition or
// slow window was in force at any time in [from, to] (since the schedule
// started), or a late ack was due: one given after its window (the first
// publish of a payment committed into it) disturbs as the window does,
// from the publish until a lease after its ack.
func (c *check) disturbed(from, to time.Duration) bool {
	c.disturbMu.Lock()
	defer c.disturbMu.Unlock()
	for _, w := range c.disturbances {
		if w.from <= to && (w.to < 0 || w.to >= from) {
			return true
		}
	}
	for _, a := range c.bro.record() {
		if a.Late > 0 && a.At <= to && a.At+a.Late+c.opts.Lease >= from {
			return true
		}
	}
	return false
}

// window is a span of a schedule, since its start; to < 0: still open.
type window struct{ from, to time.Duration }

// disturbFor records a disturbance from now for d: a slow broker's
// window and its late acks, during which a relay may hold claims past
// their lease and publish them after another relay's failure.
func (c *check) disturbFor(d time.Duration) {
	c.disturbMu.Lock()
	defer c.disturbMu.Unlock()
	now := time.Since(c.bro.start)
	c.disturbances = append(c.disturbances, window{from: now, to: now + d})
}

// disturb opens a disturbance on link (a point one, for a kill or stop,
// with link ""); calm closes the link's open one.
func (c *check) disturb(link string, point bool) {
	c.disturbMu.Lock()
	defer c.disturbMu.Unlock()
	now := time.Since(c.bro.start)
	w := window{from: now, to: -1}
	if point {
		w.to = now
	}
	c.disturbances = append(c.disturbances, w)
	if !point {
		if c.openDisturb == nil {
			c.openDisturb = map[string]int{}
		}
		if _, open := c.openDisturb[link]; !open {
			c.openDisturb[link] = len(c.disturbances) - 1
		} else {
			c.disturbances = c.disturbances[:len(c.disturbances)-1]
		}
	}
}

func (c *check) calm(link string) {
	c.disturbMu.Lock()
	defer c.disturbMu.Unlock()
	if i, open := c.openDisturb[link]; open {
		c.disturbances[i].to = time.Since(c.bro.start)
		delete(c.openDisturb, link)
	}
}
