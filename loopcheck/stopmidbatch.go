package loopcheck

import "fmt"

// stopMidBatchPayments is how many payments stop-mid-batch commits in
// one transaction: a relay claims them as one batch, and is asked to
// stop while it publishes the first.
const stopMidBatchPayments = 3

// stopMidBatch stops a relay through the library's own stop while it is
// in the middle of a batch: the harness commits three payments in one
// transaction (the bait), holds the first publish any live relay makes
// on its way to the broker, asks that relay to stop (Stopper), and only
// then lets the publish through, so the stop is asked with the rest of
// the batch unsent. A correct relay sends them, or leaves them for
// another relay (its claim runs out); one whose Close acks its buffer
// marks them done unsent (no-loss). A drawn stop meets a batch by luck:
// one schedule in a hundred and more. Drawn only for a Stopper.
func (c *check) stopMidBatch() {
	if _, ok := capability[Stopper](c.subj); !ok {
		c.tally.injected("stop-mid-batch", noRelay, false, 0)
		c.record("StopMidBatch", "operator", "", "skipped: the subject has no stop of its own (not a Stopper)")
		return
	}
	h, got, ok := c.catchPublishOf(stopMidBatchPayments, "StopMidBatch", "nothing stopped")
	if !ok {
		return
	}
	if rl := c.relays[got.index]; rl == nil || rl.pub.relay != got.relay {
		close(h.release)
		c.tally.injected("stop-mid-batch", dispatcher(got.index).String(), false, 0)
		c.record("StopMidBatch", dispatcher(got.index).String(), got.relay, "skipped: the relay that published is not running")
		return
	}
	c.record("StopMidBatch", dispatcher(got.index).String(), fmt.Sprintf("%s, publishing %s of %s", got.relay, got.msg.ID, got.msg.AggregateID),
		"its stop asked mid-publish, then the publish let through")
	c.dispatcherFaults++
	running, killed := c.stopThen(got.index, func() { close(h.release) })
	c.tally.injected("stop-mid-batch", dispatcher(got.index).String(), running, btoi(killed))
}
