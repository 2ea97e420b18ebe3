package stepcheck

import (
	"fmt"
	"slices"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/model"
)

// Check reads the subject's state back after every action and checks the
// safety properties against the model.
func (m *machine) Check(t *rapid.T) {
	m.reportHoldErr(t)
	ps, err := m.observe()
	if err != nil {
		m.failedCall(t, "read back", err)
	}
	m.report(t, ps)
}

// observe reads rows, effects, stats and the next attempt, resolves what
// the model left unknown, and returns every disagreement.
func (m *machine) observe() ([]model.Problem, error) {
	obs, ps, err := m.readBack()
	if err != nil {
		return nil, err
	}
	ps = slices.Clone(ps)
	m.flushBroker()
	m.snapshotRows(obs)
	obs.Published, m.published = m.published, ""
	var more []model.Problem
	m.m, more = model.Observe(m.m, obs, m.afterCleanup)
	m.afterCleanup = false
	ps = append(ps, more...)
	if !m.m.Settled() {
		return ps, nil
	}
	more, err = m.checkOps()
	return append(ps, more...), err
}

// checkOps compares what an operator sees (Stats, NextAttemptAt) with the
// model.
func (m *machine) checkOps() ([]model.Problem, error) {
	next, ok := m.m.NextAttemptAt()
	st, gotAt, gotNext, err := m.readOps()
	want := m.m.ExpectedStats()
	if err != nil {
		return nil, err
	}
	var ps []model.Problem
	if st != want {
		ps = append(ps, model.Problem{Property: model.Observability,
			Detail: fmt.Sprintf("stats %+v, want %+v", st, want)})
	}
	if gotNext != ok || (ok && !gotAt.Equal(next)) {
		ps = append(ps, model.Problem{Property: model.ModelAgreement,
			Detail: fmt.Sprintf("next attempt at %v (%v), want %v (%v)", gotAt, gotNext, next, ok)})
	}
	return ps, nil
}

// observed converts read-back rows to the model's terms.
func observed(sem model.Semantics, rows []Row, effects map[string]int) (model.Observed, []model.Problem) {
	o := model.Observed{Rows: map[string]model.Row{}, Payload: map[string]string{}, Effects: effects}
	var ps []model.Problem
	for _, r := range rows {
		st, ok := sem.ParseStatus(r.Status)
		if !ok {
			ps = append(ps, model.Problem{Property: model.ModelAgreement, Event: r.ID, Detail: "unknown status " + r.Status})
		}
		o.Rows[r.ID] = model.Row{ID: r.ID, AggregateID: r.AggregateID, Status: st, Attempts: r.Attempts,
			ClaimID: r.ClaimID, ClaimExpiresAt: r.ClaimExpiresAt, AvailableAt: r.AvailableAt,
			CreatedAt: r.CreatedAt, PublishedAt: r.PublishedAt}
		o.Payload[r.ID] = string(r.Payload)
	}
	return o, ps
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
