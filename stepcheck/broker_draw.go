package stepcheck

import "pgregory.net/rapid"

// drawBroker draws what the broker does with the next publish: accept
// it, refuse it, or (with faults) accept it and lose the acknowledgement.
// The swarm draw picks one of those its check has on with equal chances:
// a lost acknowledgement, then the mark that follows it, is where a
// dispatcher's bugs are, and it comes up one publish in three, not one in
// eight.
func (m *machine) drawBroker(t *rapid.T) {
	if m.opts.Draw == DrawFixed {
		m.broker.refuse = rapid.Bool().Draw(t, "broker refuses")
		if m.opts.Faults && !m.broker.refuse {
			m.broker.loseAck = rapid.IntRange(0, 3).Draw(t, "ack lost") == 0
		}
		return
	}
	outcomes := []string{"accepts", brokerRefuses}
	if m.opts.Faults && m.swarm.on(brokerLosesAck) {
		outcomes = append(outcomes, brokerLosesAck)
	}
	switch rapid.SampledFrom(outcomes).Draw(t, "broker") {
	case brokerRefuses:
		m.broker.refuse = true
	case brokerLosesAck:
		m.broker.loseAck = true
	}
}
