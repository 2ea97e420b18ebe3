package faults

import (
	"sync"
	"time"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// gateType is the toxiproxy toxic type of every fault this package makes.
const gateType = "outboxcheck_gate"

func init() { toxics.Register(gateType, new(gateToxic)) }

// gate is the shared state of one injected fault: its two toxics (one per
// direction) count client requests through it and arm together.
type gate struct {
	mu       sync.Mutex
	fault    Fault
	requests int  // client requests completed through the link
	armed    bool // the fault has struck
	spent    bool // a one-shot fault (Reset, LostReply) has done its harm
	affected int  // chunks dropped, delayed, or connections cut
}

// upstream decides the fate of a client chunk that completes n requests
// (commit: one of them is a COMMIT). The fault arms on the first chunk sent
// once After requests are done, or with AtCommit on the first COMMIT.
func (g *gate) upstream(n int, commit bool) (pass bool, cut bool, delay time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.armed && (g.fault.AtCommit && commit || !g.fault.AtCommit && g.requests >= g.fault.After) {
		g.armed = true
	}
	g.requests += n
	if !g.armed || g.spent {
		return true, false, 0
	}
	switch g.fault.Kind {
	case Blackhole:
		g.affected++
		return false, false, 0
	case Reset:
		g.affected++
		g.spent = true
		return false, true, 0
	case Latency:
		g.affected++
		return true, false, time.Duration(g.fault.DelayMs) * time.Millisecond
	}
	return true, false, 0 // LostReply: the request goes through
}

// downstream decides the fate of a server chunk: true passes it on; false
// drops it and closes the connection (LostReply).
func (g *gate) downstream() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.armed && !g.spent && g.fault.Kind == LostReply {
		g.affected++
		g.spent = true
		return false
	}
	return true
}

func (g *gate) counts() (armed bool, affected int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.armed, g.affected
}

// gates maps a gate id (carried in the toxic's attributes) to its state.
var gates sync.Map

// gateToxic is the toxiproxy side of a gate; one per direction.
type gateToxic struct {
	ID string `json:"id"`
	Up bool   `json:"up"` // the client→server direction
}

func (t *gateToxic) Pipe(stub *toxics.ToxicStub) {
	v, _ := gates.Load(t.ID)
	g, _ := v.(*gate)
	var rc requestCounter // this connection's client messages
	first := true
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			if g == nil {
				if !send(stub, c) {
					return
				}
				continue
			}
			if first && t.Up && isCancelRequest(c.Data) {
				stub.Close() // swallowed: see isCancelRequest
				return
			}
			first = false
			if !t.forward(g, &rc, stub, c) {
				return
			}
		}
	}
}

// forward applies the gate to one chunk; false ends the pipe.
func (t *gateToxic) forward(g *gate, rc *requestCounter, stub *toxics.ToxicStub, c *stream.StreamChunk) bool {
	if !t.Up {
		if g.downstream() {
			return send(stub, c)
		}
		stub.Close() // the reply is lost and the connection dies with it
		return false
	}
	before := rc.commits
	n := rc.feed(c.Data)
	pass, cut, delay := g.upstream(n, rc.commits > before)
	if cut {
		stub.Close()
		return false
	}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-stub.Interrupt:
			// Healed mid-delay: deliver, never drop, unless nothing reads
			// any more (the connection closed while it was healed).
			_ = send(stub, c)
			return false
		}
	}
	if pass {
		return send(stub, c)
	}
	return true
}

// sendTimeout is how long a chunk may wait for the next stage to take it.
// Only a connection that is gone leaves it waiting (its writer stopped
// reading); without a bound the pipe's goroutine would wait forever.
const sendTimeout = 2 * time.Second

// send passes c on; false (the pipe ends) if nothing took it in time.
func send(stub *toxics.ToxicStub, c *stream.StreamChunk) bool {
	return stub.WriteOutput(c, sendTimeout) == nil
}
