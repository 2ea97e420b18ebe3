// Package faults injects network faults on each actor's link to
// PostgreSQL through an embedded toxiproxy server (docs/faults.md), and counts
// what every fault actually did.
//
// Every fault is deterministic: toxicity 1.0, no jitter, and the only
// parameters (how many requests pass before it strikes, how long a delay)
// are chosen by the caller, i.e. by rapid.
package faults

// Kind is a network fault. Kinds are small values; Loop lists every one,
// All the ones the step contract draws.
type Kind string

const (
	// Blackhole is a short partition. From the arming request on, every
	// client chunk is held: nothing reaches the server and so nothing comes
	// back. Each connection keeps its own held chunks, in order. At Heal
	// they are delivered in order on the same connection, as TCP
	// retransmission would after a brief outage, and the connection goes
	// on. A connection that ends before the heal (the client closed it, or
	// Cut or Down dropped it) loses its held chunks: they never reach the
	// server, as if the partition had outlasted retransmission. Every held
	// chunk counts as affected.
	Blackhole Kind = "blackhole"
	// Sever is a long partition: it holds client chunks exactly like
	// Blackhole, but at Heal every connection it held a chunk of is closed
	// instead, its held chunks discarded (they never reach the server), as
	// a connection ends whose retransmissions gave up. Connections it held
	// nothing of go on; new connections work. Every held chunk counts as
	// affected.
	Sever Kind = "sever"
	// Reset closes the connection abruptly at the arming request, which
	// never reaches the server. It strikes once; reconnecting works.
	Reset Kind = "reset"
	// Latency delays every request from the arming one on.
	Latency Kind = "latency"
	// LostReply lets the arming request reach the server, drops its reply
	// and closes the connection: the ambiguous commit, which pgx reports as
	// a closed connection that looks safe to retry (FIELD-NOTES). It
	// strikes once; reconnecting works.
	LostReply Kind = "lost-reply"
)

// All lists the network fault kinds the step contract draws, in a stable
// order. Its seeds depend on it: do not change it (Sever is in Loop only).
var All = []Kind{Blackhole, Reset, Latency, LostReply}

// Loop lists the network fault kinds the loop contract draws, in a stable
// order: every kind there is.
var Loop = []Kind{Blackhole, Sever, Reset, Latency, LostReply}

// Fault is one injection on one link: its kind, how many client requests
// (protocol round trips: startup, authentication, Query, Sync) pass
// untouched before it arms, and the delay for Latency.
type Fault struct {
	Kind    Kind
	After   int
	DelayMs int
	// AtCommit arms the fault on the next COMMIT instead of after After
	// requests: the request that makes a transaction's outcome ambiguous.
	AtCommit bool
	// AtStatement arms it on the next request that runs a statement (a
	// simple Query or an Execute), never on connecting, authenticating or
	// preparing one: the request that changes data, whatever the session
	// has cached. A LostReply there is a statement that ran and whose
	// reply was lost.
	AtStatement bool
}
