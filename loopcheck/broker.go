package loopcheck

import (
	"context"
	"errors"
	"sync"

	"github.com/outboxcheck/outboxcheck/properties"
)

var errBrokerDown = errors.New("broker refused the publish (down)")

// broker records every message it accepts; while down it refuses all.
type broker struct {
	mu   sync.Mutex
	down bool
	log  []properties.Message
}

func (b *broker) Publish(_ context.Context, m properties.Message) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.down {
		return errBrokerDown
	}
	b.log = append(b.log, m)
	return nil
}

func (b *broker) setDown(down bool) { b.mu.Lock(); b.down = down; b.mu.Unlock() }

func (b *broker) messages() []properties.Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]properties.Message(nil), b.log...)
}
