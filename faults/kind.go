// Package faults injects network faults on each actor's link to
// PostgreSQL through an embedded toxiproxy server (DESIGN §8), and counts
// what every fault actually did.
//
// Every fault is deterministic: toxicity 1.0, no jitter, and the only
// parameters (how many requests pass before it strikes, how long a delay)
// are chosen by the caller, i.e. by rapid.
package faults

// Kind is a network fault. Kinds are small values; All lists them.
type Kind string

const (
	// Blackhole drops every request from the arming one on: nothing
	// reaches the server and nothing comes back.
	Blackhole Kind = "blackhole"
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

// All lists the network fault kinds, in a stable order.
var All = []Kind{Blackhole, Reset, Latency, LostReply}

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
}
