package harness

// FaultCount is what one kind of fault did at one place over a run: a
// network fault on a link, a kill of a dispatcher, a broker outage, a
// time zone. A contract that records these (the loop contract, in
// Summary.Nemesis) lists every kind it has, the ones never drawn too
// (Injected 0, Where ""), so that a report can call out what never
// happened.
type FaultCount struct {
	Kind  string
	Where string // the link, dispatcher, broker, database or zone; "" for none
	// Injected counts the faults scheduled and put on; Struck, of those,
	// the ones that took effect; Affected, the requests, publishes or
	// deliveries they changed (Note says which).
	Injected, Struck, Affected int
	Note                       string
}

// NeverStruck reports whether the fault was injected and never took
// effect: a green run must not be green because of it.
func (f FaultCount) NeverStruck() bool { return f.Injected > 0 && f.Struck == 0 }
