package properties

import "pgregory.net/rapid"

// drawBroker draws what the broker does with the next publish: refuse it,
// or (with faults) accept it and lose the acknowledgement. A swarm that
// leaves a broker fault out never draws it.
func (m *machine) drawBroker(t *rapid.T) {
	if m.opts.Draw == DrawFixed {
		m.broker.refuse = rapid.Bool().Draw(t, "broker refuses")
		if m.opts.Faults && !m.broker.refuse {
			m.broker.loseAck = rapid.IntRange(0, 3).Draw(t, "ack lost") == 0
		}
		return
	}
	if m.swarm.on(brokerRefuses) {
		m.broker.refuse = rapid.Bool().Draw(t, "broker refuses")
	}
	if m.opts.Faults && m.swarm.on(brokerLosesAck) && !m.broker.refuse {
		m.broker.loseAck = rapid.IntRange(0, 3).Draw(t, "ack lost") == 0
	}
}
