package faults

import (
	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// connState is one connection's state in one direction of a gate. It lives
// on the toxiproxy stub (toxics.StatefulToxic), so it outlives a Pipe that
// toxiproxy interrupts, and Cleanup can read it.
type connState struct {
	requests requestCounter // this connection's client requests
	started  bool           // a chunk went through the gate
	// held are the chunks a partition (Blackhole, Sever) keeps, in the
	// order they were sent.
	held []*stream.StreamChunk
}

// NewState gives each connection its own connState.
func (t *gateToxic) NewState() any { return new(connState) }

// connOf returns the stub's connState, making one if toxiproxy did not.
func connOf(stub *toxics.ToxicStub) *connState {
	if cs, ok := stub.State.(*connState); ok {
		return cs
	}
	cs := new(connState)
	stub.State = cs
	return cs
}

// Cleanup ends the partition on one live connection as toxiproxy removes
// the toxic (Heal, or Inject replacing a fault), after Pipe returned and
// before the chunks still in the chain are flushed. A Sever closes a
// connection it held chunks of, discarding them; any other gate delivers
// them in order, the retransmission that follows a short partition. It
// needs the gate: the gate is forgotten only after its toxics are removed.
func (t *gateToxic) Cleanup(stub *toxics.ToxicStub) {
	cs := connOf(stub)
	held := cs.held
	cs.held = nil
	if len(held) == 0 {
		return
	}
	if g := lookupGate(t.ID); g != nil && g.fault.Kind == Sever {
		hangUp(stub) // toxiproxy then leaves the closed stub alone
		return
	}
	for _, c := range held {
		if !send(stub, c) {
			return
		}
	}
}
