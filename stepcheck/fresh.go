package stepcheck

import (
	"github.com/outboxcheck/outboxcheck/harness"
	"pgregory.net/rapid"
)

// Where a fault strikes depends on the session it strikes: what a
// connection remembers (pgx's statement cache) changes how many requests
// an operation takes. So before a fault goes on an actor's link, the
// actor's session must be one this check made, never one carried over
// from an earlier check (a replay of the check alone would not have it).
// A session is fresh once the check has cut it: a crash, a settle, a
// database crash. Sessions nothing is injected on are left as they are,
// as they are without faults: cutting every actor's session at every
// check's start cost five reconnects a check.

// freshStart begins a check as if no check ran before it: a check that
// failed never drained, so faults may still be on.
func (m *machine) freshStart(t *rapid.T) {
	m.healAll(t)
}

// healAll heals every link with a fault on it and settles its actor. The
// other links have nothing in flight: every call that failed was settled.
func (m *machine) healAll(t *rapid.T) {
	if m.links.net == nil {
		return
	}
	for _, a := range m.faultable() {
		if m.links.net.Faulty(a.String()) {
			m.heal(t, a)
		}
	}
}

// crash cuts actor a's session, as a dying process would.
func (m *machine) crash(a harness.Actor) {
	m.subj.Crash(a)
	m.fresh[a] = true
	delete(m.unheard, a)
	m.releaseHolds(a)
}

// freshen gives actor a a session of this check's own, before a fault
// goes on its link.
func (m *machine) freshen(t *rapid.T, a harness.Actor) {
	if m.fresh[a] {
		return
	}
	m.crash(a)
	m.settle(t, a)
}
