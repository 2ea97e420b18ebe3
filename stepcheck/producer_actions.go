package stepcheck

import (
	"context"
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/model"
)

// Commit runs a producer transaction for a new payment. Two commits never
// share an instant: the claim order (available_at, created_at) has no tie
// breaker, so tied rows would come back in whatever order the table's
// physical layout gives, and a seed would not replay. The clock ticks 1 µs
// when needed; the model accepts ties all the same.
func (m *machine) Commit(t *rapid.T) {
	m.payable()
	if !m.m.Now.After(m.lastCommit) {
		m.advance(t, time.Microsecond)
	}
	m.lastCommit = m.m.Now
	p := m.newPayment()
	e := m.record("Commit", harness.Actor{Role: harness.Producer}, p.ID)
	var id string
	before := len(m.broker.Log)
	err := m.call(t, harness.Actor{Role: harness.Producer}, func(ctx context.Context) (err error) { id, err = m.subj.Commit(ctx, p, m.m.Now); return })
	m.finish(e, err, "event "+id)
	var ps []model.Problem
	m.m, ps = model.Commit(m.m, p.ID, id, m.outcome(err))
	m.report(t, ps)
	m.applyPublishes(t, before) // a producer that publishes itself (dual write)
}

// Rollback runs a producer transaction that writes and then rolls back.
func (m *machine) Rollback(t *rapid.T) {
	m.payable()
	p := m.newPayment()
	e := m.record("Rollback", harness.Actor{Role: harness.Producer}, p.ID)
	before := len(m.broker.Log)
	err := m.call(t, harness.Actor{Role: harness.Producer}, func(ctx context.Context) error { return m.subj.Rollback(ctx, p, m.m.Now) })
	m.finish(e, err, "rolled back")
	m.m = model.Rollback(m.m, p.ID)
	m.applyPublishes(t, before) // a producer that publishes itself (dual write)
}

// MaxPayments bounds the payments (commits and rollbacks) of one check.
// Every step reads back every row and effect and checks each against the
// model, so a check that kept adding events would cost more per step the
// longer it ran (a 14,000-step check held 1,900 rows). A long check goes
// deeper on a bounded set of events instead (the small-scope hypothesis:
// the outbox's bugs need a handful); a check of the default 30 steps makes
// about four.
const MaxPayments = 32

// payable skips a producer action once the check has made MaxPayments.
func (m *machine) payable() {
	if m.pays >= MaxPayments {
		skip("the check has made its payments")
	}
}

func (m *machine) newPayment() harness.Payment {
	m.pays++
	return harness.Payment{ID: fmt.Sprintf("pay-%d", m.pays), MerchantID: fmt.Sprintf("merchant-%d", m.pays%3), AmountCents: int64(100 * m.pays)}
}
