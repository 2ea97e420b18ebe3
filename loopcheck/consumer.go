package loopcheck

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// startConsumer delivers every message the broker accepted, in order, to
// the subject's consumer until it acknowledges.
func (c *check) startConsumer() {
	ctx, cancel := context.WithCancel(c.ctx)
	c.stopC = cancel
	c.consWG.Go(func() {
		next := 0
		for ctx.Err() == nil {
			if m, ok := c.takeAgain(); ok { // a crashed delivery comes back first
				if c.deliver(ctx, m) != nil {
					c.redeliver(m)
					sleep(ctx, 20*time.Millisecond)
				}
				continue
			}
			msgs := c.bro.messages()
			if next >= len(msgs) {
				sleep(ctx, 5*time.Millisecond)
				continue
			}
			if c.deliver(ctx, msgs[next]) == nil {
				next++
			} else {
				sleep(ctx, 20*time.Millisecond) // its link may be partitioned: try again shortly
			}
		}
	})
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// deliver hands m to the consumer, one delivery at a time (the contract
// does not ask Handle to be safe for concurrent use).
func (c *check) deliver(ctx context.Context, m harness.Message) error {
	c.handling.Lock()
	defer c.handling.Unlock()
	timeout := c.opts.CallTimeout
	if c.net.Faulty(harness.Actor{Role: harness.Consumer}.String()) {
		timeout = min(faultyProducerTimeout, timeout) // as for the producer
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	err := c.subj.Handle(cctx, m)
	cancel()
	c.noteFault(err)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.delivered = append(c.delivered, m)
	if err == nil {
		c.acked[m.ID] = true
	} else {
		c.handleErr[m.ID] = err
	}
	return err
}

// redeliver queues m to be delivered again: its delivery crashed before
// the acknowledgement, so a broker would hand it out again.
func (c *check) redeliver(m harness.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.again = append(c.again, m)
}

func (c *check) takeAgain() (harness.Message, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.again) == 0 {
		return harness.Message{}, false
	}
	m := c.again[0]
	c.again = c.again[1:]
	return m, true
}

var errConsumerCrash = errors.New("the harness crashed the consumer here")

// crashConsumer delivers message st.N to the consumer and crashes it at
// failpoint st.At: the link is cut, its sessions ended, and the message
// delivered again later. A subject without failpoints cannot be crashed
// there: the step says so.
func (c *check) crashConsumer(st Step) {
	fp, ok := capability[Failpointer](c.subj)
	msgs := c.bro.messages()
	link := harness.Actor{Role: harness.Consumer}
	switch {
	case !ok:
		c.record("CrashConsumer", consumer, string(st.At), "skipped: the subject has no failpoints (Failpointer)")
		return
	case len(msgs) == 0:
		c.tally.injected("crash-consumer", link.String(), false, 0)
		c.record("CrashConsumer", consumer, string(st.At), "skipped: the broker has no message yet")
		return
	}
	m := msgs[st.N%len(msgs)]
	c.tally.consumerCrash(false)
	reached := false
	c.handling.Lock()
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.CallTimeout)
	err := fp.HandleAt(ctx, m, func(p harness.Failpoint) error {
		if p == st.At {
			reached = true
			return errConsumerCrash
		}
		return nil
	})
	cancel()
	c.noteFault(err)
	c.tally.injected("crash-consumer", link.String(), reached, 0)
	cerr := c.net.Cut(link.String())
	n, terr := c.terminate(link)
	c.handling.Unlock()
	res := fmt.Sprintf("crashed at %s; link cut, %s ended; delivered again later", st.At, sessions(n))
	if !reached {
		res = fmt.Sprintf("the failpoint was not reached (%s); link cut, %s ended; delivered again later", result(err, "acknowledged"), sessions(n))
	} else {
		c.tally.consumerCrash(true)
	}
	if e := errors.Join(cerr, terr); e != nil {
		res += "; error: " + e.Error()
	}
	c.redeliver(m)
	c.record("CrashConsumer", consumer, fmt.Sprintf("%s at %s", m.ID, st.At), res)
}

// consumer is the consumer's name in the story: its link's, as its
// partitions and heals are named.
var consumer = harness.Actor{Role: harness.Consumer}.String()
