package harness

import "time"

// Checkpoint is where a run stood when one of its generated checks ended
// (a loop run's schedule, in package loopcheck): the data of a plot of
// the run's rate and faults over time. Shrink runs have none.
type Checkpoint struct {
	Check   int           // the check's number, from 1, in the order checks ended (the loop contract runs several at once)
	Elapsed time.Duration // from the run's start to the check's end
	Steps   int           // the check's own steps
	Faults  int           // faults injected so far in the run (Summary.Faults)
	Struck  int           // of them, those that took effect so far
}

// Faults counts s's faults as its coverage does: injected are network
// faults put on a link, broker refusals and lost acknowledgements,
// dispatcher and database crashes and consumer crashes scheduled; struck
// are the network faults a request reached and the consumer crashes that
// reached their failpoint, with every broker fault and dispatcher or
// database crash, which act as they are injected. A contract that counts
// every kind of its nemesis (Nemesis) is counted from that instead.
func (s Summary) Faults() (injected, struck int) {
	if len(s.Nemesis) > 0 { // every kind, the network's per link included
		for _, f := range s.Nemesis {
			injected += f.Injected
			struck += f.Struck
		}
		return injected, struck
	}
	for _, c := range s.Network {
		injected += c.Injected
		struck += c.Struck
	}
	acted := s.Broker.Refused + s.Broker.AckLost + s.Crashes.Dispatcher + s.Crashes.DispatcherMidMark + s.Crashes.Database
	injected += acted + s.Crashes.ConsumerScheduled
	struck += acted + s.Crashes.ConsumerReached
	return injected, struck
}
