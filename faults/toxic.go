package faults

import (
	"time"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// gateType is the toxiproxy toxic type of every fault this package makes.
const gateType = "outboxcheck_gate"

func init() { toxics.Register(gateType, new(gateToxic)) }

// gateToxic is the toxiproxy side of a gate; one per direction. toxiproxy
// shares one value between every connection through the link; what is
// per connection lives in a connState on the stub.
type gateToxic struct {
	ID string `json:"id"`
	Up bool   `json:"up"` // the client→server direction
}

// Pipe runs the gate on one connection until the connection ends or
// toxiproxy interrupts it. An interrupt leaves the held chunks where they
// are: toxiproxy also interrupts to rewire a chain, and only Cleanup, on
// removal (the heal), decides their fate.
func (t *gateToxic) Pipe(stub *toxics.ToxicStub) {
	g := lookupGate(t.ID)
	cs := connOf(stub)
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				cs.held = nil // the connection ended: they never arrive
				stub.Close()
				return
			}
			if !t.take(g, cs, stub, c) {
				return
			}
		}
	}
}

// take applies the gate to one chunk; false ends the pipe.
func (t *gateToxic) take(g *gate, cs *connState, stub *toxics.ToxicStub, c *stream.StreamChunk) bool {
	if g == nil {
		return send(stub, c)
	}
	first := !cs.started
	cs.started = true
	if first && t.Up && isCancelRequest(c.Data) {
		hangUp(stub) // swallowed: see isCancelRequest
		return false
	}
	if !t.Up {
		if g.downstream() {
			return send(stub, c)
		}
		hangUp(stub) // the reply is lost and the connection dies with it
		return false
	}
	return t.upstream(g, cs, stub, c)
}

// upstream applies the gate to one client chunk; false ends the pipe.
func (t *gateToxic) upstream(g *gate, cs *connState, stub *toxics.ToxicStub, c *stream.StreamChunk) bool {
	commits, statements := cs.requests.commits, cs.requests.statements
	n := cs.requests.feed(c.Data)
	v, d := g.upstream(n, cs.requests.commits > commits, cs.requests.statements > statements)
	if n > 0 { // a whole request the client waits on: no reply before…
		switch v {
		case hold:
			g.stall.tell(Forever) // …the heal
		case delay:
			g.stall.tell(time.Now().Add(d)) // …the delay is over
		}
	}
	switch v {
	case hold:
		cs.held = append(cs.held, c)
		return true
	case cut:
		hangUp(stub)
		return false
	case delay:
		cut := g.cut.next()
		select {
		case <-time.After(d):
		case <-stub.Interrupt:
			// Healed mid-delay: deliver, never drop, unless nothing reads
			// any more (the connection closed while it was healed).
			_ = stub.WriteOutput(c, sendTimeout)
			return false
		case <-cut:
			hangUp(stub) // the connection was dropped: the chunk with it
			return false
		}
	}
	return send(stub, c)
}

// sendTimeout is how long a chunk may wait for the next stage to take it.
// Only a connection that is gone leaves it waiting (its writer stopped
// reading); without a bound the pipe's goroutine would wait forever.
const sendTimeout = 2 * time.Second

// send passes c on. If nothing took it in time the connection is gone:
// send hangs the stub up and returns false (the pipe ends).
func send(stub *toxics.ToxicStub, c *stream.StreamChunk) bool {
	if stub.WriteOutput(c, sendTimeout) == nil {
		return true
	}
	hangUp(stub)
	return false
}

// hangUp closes the stub, which ends its connection, and drains its input
// until the stage before it closes too: that stage must never block on a
// stub nobody reads.
func hangUp(stub *toxics.ToxicStub) {
	stub.Close()
	go func() {
		for range stub.Input {
		}
	}()
}
