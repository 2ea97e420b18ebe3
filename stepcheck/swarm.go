package stepcheck

import (
	"slices"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/faults"
)

// Draw is how a run draws each check's actions.
type Draw int

const (
	// DrawSwarm is swarm testing (Groce et al., ISSTA 2012): each check
	// first draws which kinds of action and fault it may use, each kind
	// on with probability 1/2 (some more or less often: see onOdds), and
	// then draws its steps from those alone. A check
	// that leaves out crashes, say, goes deeper into backoff. Its
	// partitions lean to where faults matter: the producer's COMMIT and a
	// dispatcher's mark after a publish. The default.
	DrawSwarm Draw = iota
	// DrawFixed is one fixed mix for every check: every action and fault
	// kind, with the weights of weights. The draw before swarm testing;
	// the benchmark runs it side by side.
	DrawFixed
)

func (d Draw) String() string {
	if d == DrawFixed {
		return "fixed"
	}
	return "swarm"
}

// core are the actions every check has: without them nothing happens,
// and without the recoveries (Heal, RestartDispatcher) a check that
// draws a partition or a crash could do nothing more on that link, or
// with that dispatcher, for the rest of its steps.
var core = []string{"Commit", "Claim", "Publish", "MarkPublished", "MarkFailed", "AdvanceClock", "Heal", "RestartDispatcher"}

// swarm is one check's choice of kinds: an action by name, a network
// fault by its faults.Kind, and the broker's lost acknowledgement
// (brokerLosesAck; its refusals are core, as MarkFailed is). The zero
// swarm has every kind on.
type swarm struct {
	off map[string]bool
}

// The broker's faults, as drawBroker names them.
const (
	brokerRefuses  = "broker-refuses"
	brokerLosesAck = "broker-loses-ack"
)

// on reports whether kind may be used in this check.
func (s swarm) on(kind string) bool { return !s.off[kind] }

// drawSwarm draws, for every kind the run has beyond the core actions,
// whether this check leaves it out. Each is a draw that shrinks to 0,
// "on": a shrunk counterexample keeps only the omissions it needs.
func drawSwarm(t *rapid.T, actions []string, withFaults bool) swarm {
	kinds := slices.DeleteFunc(slices.Clone(actions), func(a string) bool { return slices.Contains(core, a) })
	if withFaults {
		for _, k := range faults.All {
			kinds = append(kinds, string(k))
		}
		kinds = append(kinds, brokerLosesAck)
	}
	slices.Sort(kinds)
	s := swarm{off: map[string]bool{}}
	for _, k := range kinds {
		odds, ok := onOdds[k]
		if !ok {
			odds = [2]int{1, 2}
		}
		if rapid.IntRange(0, odds[1]-1).Draw(t, "leave out "+k) >= odds[0] {
			s.off[k] = true
		}
	}
	return s
}

// onOdds are the kinds on in other than half the checks: {n, d} is n in d.
// The quiet actions (a rollback, a delivery, an operator's redrive or
// cleanup) disturb little and take part in deep bugs (a redrive needs an
// event that went DEAD first): three checks in four. A database crash
// costs a restart, crash recovery and a reconnect of every actor (about
// 130 ms, the price of a hundred steps) and tests durability and
// reconnection alone (no step-contract mutant needs it): a check in four,
// and once in it (CrashDatabase).
var onOdds = map[string][2]int{
	"Rollback": {3, 4}, "Deliver": {3, 4}, "Redrive": {3, 4}, "Cleanup": {3, 4},
	"CrashDatabase": {1, 4},
}

// kindsOn lists the network fault kinds this check may inject.
func (s swarm) kindsOn() []faults.Kind {
	var out []faults.Kind
	for _, k := range faults.All {
		if s.on(string(k)) {
			out = append(out, k)
		}
	}
	return out
}
