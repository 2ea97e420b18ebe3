package stepcheck

import (
	"context"
	"fmt"
	"strings"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/model"
)

// DeliverTogether hands one message to two consumers at the same instant,
// as a broker does when it redelivers to a second instance while the first
// still works on it. The gate (gate.go) holds both until each has reached
// its first write, so an inbox that checks with a read and records with a
// separate write lets both through. Each delivery counts once in the model
// in either order: a second delivery of an event already in the inbox adds
// nothing, so every linearization leaves one effect (Options.Concurrent).
func (m *machine) DeliverTogether(t *rapid.T) {
	if m.opts.Consumers < 2 {
		skip("fewer than two consumers")
	}
	i := m.pickMessage(t)
	msg := m.broker.Log[i]
	cs := []harness.Actor{{Role: harness.Consumer, N: 0}, {Role: harness.Consumer, N: 1}}
	e := m.record("DeliverTogether", cs[0], fmt.Sprintf("message #%d %s, with %s", i+1, msg.ID, cs[1]))
	calls := make([]func(context.Context) error, len(cs))
	for k, c := range cs {
		calls[k] = func(ctx context.Context) error { return m.subj.Handle(ctx, c.N, msg, nil) }
	}
	errs := m.together(t, cs, calls)
	parts := make([]string, len(cs))
	for k, c := range cs {
		parts[k] = fmt.Sprintf("%s: %s", c, result(errs[k], "acknowledged"))
		m.m = model.Deliver(m.m, i, m.delivery(errs[k], ""))
	}
	e.Result, e.Outcome = strings.Join(parts, "; "), m.worstOutcome(errs)
}
