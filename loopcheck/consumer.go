package loopcheck

import (
	"context"
	"time"

	"github.com/outboxcheck/outboxcheck/properties"
)

// startConsumer delivers every message the broker accepted, in order, to
// the subject's consumer until it acknowledges.
func (c *check) startConsumer() {
	ctx, cancel := context.WithCancel(c.ctx)
	c.stopC = cancel
	c.consWG.Go(func() {
		next := 0
		for ctx.Err() == nil {
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
func (c *check) deliver(ctx context.Context, m properties.Message) error {
	c.handling.Lock()
	defer c.handling.Unlock()
	timeout := c.opts.CallTimeout
	if c.net.Faulty(properties.Actor{Role: properties.Consumer}.String()) {
		timeout = min(faultyProducerTimeout, timeout) // as for the producer
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	err := c.subj.Handle(cctx, m)
	cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.delivered = append(c.delivered, m)
	if err == nil {
		c.acked[m.ID] = true
	}
	return err
}
