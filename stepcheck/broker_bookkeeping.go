// The broker's side of a step: the messages it accepted, checked against
// the model, and the faults it struck, counted in the summary.

package stepcheck

import (
	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/model"
)

// applyPublishes checks every message the broker accepted since index
// before against the model.
func (m *machine) applyPublishes(t *rapid.T, before int) {
	var ps []model.Problem
	for _, msg := range m.broker.Log[before:] {
		var p []model.Problem
		m.m, p = model.Publish(m.m, msg.ID, string(msg.Payload))
		ps = append(ps, p...)
	}
	m.report(t, ps)
}

// countBroker adds the broker faults of the last publish to the summary.
func (m *machine) countBroker() {
	if m.broker.refuse {
		m.sum.Broker.Refused++
	}
	if m.broker.loseAck {
		m.sum.Broker.AckLost++
	}
	if m.broker.duplicate {
		m.sum.Broker.Duplicates++
	}
	m.broker.refuse, m.broker.loseAck, m.broker.duplicate = false, false, false
}
