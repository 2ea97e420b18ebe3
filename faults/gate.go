package faults

import (
	"sync"
	"time"
)

// gate is the shared state of one injected fault: its two toxics (one per
// direction) count client requests through it and arm together.
type gate struct {
	mu       sync.Mutex
	fault    Fault       // never written after the gate is made
	stall    *stallWatch // the link's watcher (Net.Watch); never nil
	cut      *cutSignal  // the link's cuts; never nil
	requests int         // client requests completed through the link
	armed    bool        // the fault has struck
	spent    bool        // a one-shot fault (Reset, LostReply) has done its harm
	affected int         // chunks held or delayed, replies lost, connections cut
}

// verdict is what a gate does with one client chunk.
type verdict int

const (
	pass  verdict = iota // forward it
	hold                 // keep it on its connection until the heal (a partition)
	cut                  // drop it and close the connection (Reset)
	delay                // forward it late (Latency)
)

// upstream decides the fate of a client chunk that completes n requests
// (commit: one of them is a COMMIT; statement: it runs a statement). The
// fault arms on the first chunk sent once After requests are done, or
// with AtCommit on the first COMMIT, or with AtStatement on the first
// statement. The duration is the delay of a delay verdict.
func (g *gate) upstream(n int, commit, statement bool) (verdict, time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.armed && g.arms(commit, statement) {
		g.armed = true
	}
	g.requests += n
	if !g.armed || g.spent {
		return pass, 0
	}
	switch g.fault.Kind {
	case Blackhole, Sever:
		g.affected++
		return hold, 0
	case Reset:
		g.affected++
		g.spent = true
		return cut, 0
	case Latency:
		g.affected++
		return delay, time.Duration(g.fault.DelayMs) * time.Millisecond
	}
	return pass, 0 // LostReply: the request goes through
}

// arms reports whether a chunk arms the fault.
func (g *gate) arms(commit, statement bool) bool {
	switch f := g.fault; {
	case f.AtCommit:
		return commit
	case f.AtStatement:
		return statement
	}
	return g.requests >= g.fault.After
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

// lookupGate returns the gate with id, or nil once it is healed.
func lookupGate(id string) *gate {
	v, _ := gates.Load(id)
	g, _ := v.(*gate)
	return g
}
