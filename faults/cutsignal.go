package faults

import "sync"

// cutSignal tells a link's gates that the link's connections were dropped
// (Cut, Down): a chunk a gate still delays belongs to a connection that is
// gone, and is lost with it, as everything in flight on a cut link is.
// Without it the chunk would wait out its delay and then block toxiproxy's
// flush of a connection nobody writes to any more (5 s per chunk).
type cutSignal struct {
	mu sync.Mutex
	ch chan struct{} // closed at the next cut; nil until first asked for
}

// next returns a channel closed at the link's next cut.
func (c *cutSignal) next() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	return c.ch
}

// fire closes the current channel: every connection so far is gone.
func (c *cutSignal) fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
}
