package stepcheck

import (
	"context"
	"fmt"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/model"
)

// Rescue has the subject's rescuer make one pass at the harness's clock:
// every lease that is over is re-queued, its claim revoked (only for a
// subject whose Semantics.Rescue says expired leases go back this way).
func (m *machine) Rescue(t *rapid.T) {
	m.rescueIn(t, m.record("Rescue", harness.Actor{Role: harness.Operator}, "re-queue every lease that is over"))
}

// rescueIn runs the rescuer's pass as (part of) the step e records.
func (m *machine) rescueIn(t *rapid.T, e *harness.Entry) {
	n, err := m.rescue()
	m.finish(e, err, fmt.Sprintf("re-queued %d", n))
	var ps []model.Problem
	m.m, ps = model.Rescue(m.m, n, m.outcome(err))
	m.report(t, ps)
}

// rescue runs the subject's Rescue under the per-call deadline.
func (m *machine) rescue() (n int, err error) {
	err = m.do(harness.Actor{Role: harness.Operator}, func(ctx context.Context) (err error) {
		n, err = m.subj.(Rescuer).Rescue(ctx, m.m.Now)
		return
	})
	return n, err
}
