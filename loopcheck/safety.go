package loopcheck

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/outboxcheck/outboxcheck/harness"
)

// atMostOnce: no event_id may take effect twice, at any moment.
func (c *check) atMostOnce() *harness.Failure {
	var fx map[string]int
	if err := c.call(func(ctx context.Context) (err error) { fx, err = c.subj.Effects(ctx); return }); err != nil {
		c.noteFault(err)
		return nil // the operator's read failed: nothing is concluded from it
	}
	c.judged.step("effect-at-most-once")
	return c.twice(fx)
}

func (c *check) twice(fx map[string]int) *harness.Failure {
	for _, id := range slices.Sorted(maps.Keys(fx)) {
		if fx[id] > 1 {
			return c.fail("effect-at-most-once", fmt.Sprintf("event %s took effect %d times", id, fx[id]))
		}
	}
	return nil
}

// safety judges what no wait can mend: a stale claim's completion that
// changed a row, an effect twice, an effect of an
// event the broker never carried or of a rolled-back payment, a payment
// that took effect twice through two events, a dead letter twice or of
// a delivered payment, a retry too soon, a poison event not dead.
func (c *check) safety(e endState) *harness.Failure {
	if f := c.twice(e.fx); f != nil {
		return f
	}
	if f := c.relayLiveness(); f != nil {
		return f
	}
	// Counts before timings: two relays that both claim an event also
	// retry it each on its own clock, so a retry too soon follows from a
	// duplicate publish, and comes back less often than the duplicate.
	for _, judge := range []func(endState) *harness.Failure{c.fencing, c.phantom, c.exactlyOnce, c.deadExclusive, c.publishOnce,
		func(endState) *harness.Failure { return c.backoff() }, c.deadLetter,
		func(endState) *harness.Failure { return c.dedupeWindow() }} {
		if f := judge(e); f != nil {
			return f
		}
	}
	return nil
}

// phantom: no effect of an event the broker never carried, and no
// message of a payment whose transaction rolled back (no-phantom).
func (c *check) phantom(e endState) *harness.Failure {
	c.judged.atEnd("no-phantom", 1)
	msgs := c.bro.messages()
	carried := map[string]bool{}
	for _, m := range msgs {
		carried[m.ID] = true
	}
	for _, id := range slices.Sorted(maps.Keys(e.fx)) {
		if !carried[id] {
			return c.fail("no-phantom", fmt.Sprintf("event %s took effect but the broker never carried it", id))
		}
	}
	for _, m := range msgs {
		if c.voided[m.AggregateID] {
			return c.fail("no-phantom", fmt.Sprintf("the broker carries event %s of payment %s, whose transaction rolled back", m.ID, m.AggregateID))
		}
	}
	return nil
}

// exactlyOnce: no payment takes effect twice, through two events
// (effect-exactly-once; no-loss asks for the one).
func (c *check) exactlyOnce(e endState) *harness.Failure {
	c.judged.atEnd("effect-exactly-once", 1)
	perPay := c.perPayment(e)
	for _, pay := range slices.Sorted(maps.Keys(perPay)) {
		if perPay[pay] > 1 {
			return c.fail("effect-exactly-once", fmt.Sprintf("payment %s took effect %d times", pay, perPay[pay]))
		}
	}
	return nil
}

// deadExclusive: one dead letter per event, and none of a delivered
// payment, where the subject shows its dead letters.
func (c *check) deadExclusive(e endState) *harness.Failure {
	if e.dead == nil {
		return nil
	}
	c.judged.atEnd("dead-exclusive", 1)
	for _, pay := range slices.Sorted(maps.Keys(e.deadTwice)) {
		return c.fail("dead-exclusive", fmt.Sprintf("payment %s is dead-lettered %d times (one event, one dead letter)", pay, e.deadTwice[pay]))
	}
	perPay, ambiguous := c.perPayment(e), c.bro.ambiguous()
	for _, pay := range slices.Sorted(maps.Keys(perPay)) {
		// A relay that lost an ack, or was killed or cut off between a
		// publish and its record, may give up on an event the broker had:
		// dead and delivered is then what a correct outbox does. Only a
		// schedule without either says it is a bug.
		if perPay[pay] > 0 && e.dead[pay] && !ambiguous[pay] && c.dispatcherFaults == 0 {
			return c.fail("dead-exclusive", fmt.Sprintf("payment %s is dead and took effect too (nothing redrove it)", pay))
		}
	}
	return nil
}

// deadLetter: an event the broker refuses on every publish ends dead,
// visibly, within MaxAttempts attempts, plus a tolerance: one in flight per
// relay, and one per kill or dispatcher partition (an attempt whose
// failure the subject may never have recorded).
func (c *check) deadLetter(e endState) *harness.Failure {
	if e.dead == nil {
		return nil
	}
	tolerance, judged := c.opts.Dispatchers+c.dispatcherFaults, 0
	defer func() { c.judged.atEnd("dead-letter", judged) }()
	for _, pay := range c.bro.poisoned() {
		n := e.tries[pay]
		if e.dead[pay] || n > c.opts.MaxAttempts+tolerance {
			judged++ // one still retried within its attempts is not yet due
		}
		if !e.dead[pay] && n > c.opts.MaxAttempts+tolerance {
			return c.fail("dead-letter", fmt.Sprintf("payment %s was refused on all %d of its publishes and is not dead (MaxAttempts %d, tolerance %d: %d relays, %d kills and dispatcher partitions)",
				pay, n, c.opts.MaxAttempts, tolerance, c.opts.Dispatchers, c.dispatcherFaults))
		}
	}
	return nil
}
