package stepcheck

import (
	"context"

	"github.com/outboxcheck/outboxcheck/harness"
)

// ErrRefused is the broker's refusal of a publish (harness.ErrRefused).
var ErrRefused = harness.ErrRefused

// Broker is the harness-owned broker: it records every publish it accepts
// (duplicates included) and delivers whichever message rapid picks.
// Whether the next publish is refused is decided by the action before the
// call, so every choice comes from rapid.
type Broker struct {
	Log     []harness.Message
	refuse  bool // refuse the next publish
	loseAck bool // accept the next publish but lose its acknowledgement
	// duplicate says the last publish carried an event the broker had.
	duplicate bool
}

// ErrAckLost is what a dispatcher sees when the broker took the message but
// the acknowledgement never came back (harness.ErrAckLost).
var ErrAckLost = harness.ErrAckLost

// Publish implements Publisher.
func (b *Broker) Publish(_ context.Context, m harness.Message) error {
	if b.refuse {
		return ErrRefused
	}
	for _, had := range b.Log {
		if had.ID == m.ID {
			b.duplicate = true
			break
		}
	}
	b.Log = append(b.Log, m)
	if b.loseAck {
		return ErrAckLost
	}
	return nil
}

// currentBroker forwards to the running check's broker: Env is made once
// per run, a broker once per check.
type currentBroker struct{ b *Broker }

func (c *currentBroker) Publish(ctx context.Context, m harness.Message) error {
	return c.b.Publish(ctx, m)
}
