package properties

import (
	"context"
	"errors"
)

// ErrRefused is the broker's refusal of a publish.
var ErrRefused = errors.New("broker refused the publish")

// Broker is the harness-owned broker: it records every publish it accepts
// (duplicates included) and delivers whichever message rapid picks.
// Whether the next publish is refused is decided by the action before the
// call, so every choice comes from rapid.
type Broker struct {
	Log    []Message
	refuse bool
}

// Publish implements Publisher.
func (b *Broker) Publish(_ context.Context, m Message) error {
	if b.refuse {
		return ErrRefused
	}
	b.Log = append(b.Log, m)
	return nil
}
