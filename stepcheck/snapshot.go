package stepcheck

import (
	"context"
	"slices"
	"strings"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/model"
)

// What a history records besides the calls, for the report's lanes: each
// call's outcome, the broker's log, and every event's status in the model
// and in the database after the step.

// finish sets e's result and outcome from the call's error.
// A call that the harness ended early says which fault it saw.
func (m *machine) finish(e *harness.Entry, err error, ok string) {
	e.Result, e.Outcome = result(err, ok), m.outcomeWord(err)
	if err != nil && m.early != "" {
		e.Result += " (ended early: " + m.early + ")"
	}
}

// outcomeWord names the outcome of a call that returned err.
func (m *machine) outcomeWord(err error) string {
	return [...]string{model.Done: harness.OutcomeOK, model.NotDone: harness.OutcomeFailed, model.Unknown: harness.OutcomeUnknown}[m.outcome(err)]
}

// worstOutcome is the outcome of an entry of several calls: unknown over
// failed over ok.
func (m *machine) worstOutcome(errs []error) string {
	out := harness.OutcomeOK
	for _, err := range errs {
		switch w := m.outcomeWord(err); {
		case w == harness.OutcomeUnknown, w == harness.OutcomeFailed && out == harness.OutcomeOK:
			out = w
		}
	}
	return out
}

// last is the newest entry, or nil before the first.
func (m *machine) last() *harness.Entry {
	if n := len(m.hist.Entries); n > 0 {
		return &m.hist.Entries[n-1]
	}
	return nil
}

// flushBroker puts the messages the broker accepted since the last flush
// on the newest entry: the step that sent them.
func (m *machine) flushBroker() {
	e := m.last()
	if e == nil {
		m.brokerSeen = len(m.broker.Log)
		return
	}
	for _, msg := range m.broker.Log[m.brokerSeen:] {
		e.Broker = append(e.Broker, msg.ID)
	}
	m.brokerSeen = len(m.broker.Log)
}

// snapshotModel records on the newest entry the status of every event the
// model knows: "A|B" where an unknown outcome left either.
func (m *machine) snapshotModel() {
	e := m.last()
	if e == nil {
		return
	}
	e.Model = map[string]string{}
	for id, r := range m.m.Rows {
		e.Model[id] = r.Status.String()
	}
	for id, rs := range m.m.Maybe {
		var names []string
		for _, r := range rs {
			if n := r.Status.String(); !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		e.Model[id] = strings.Join(names, "|")
	}
	for id := range m.m.Gone {
		if _, ok := e.Model[id]; !ok {
			e.Model[id] = model.Absent.String()
		}
	}
}

// snapshotRows records on the newest entry the status of every row the
// database holds and of every event the model knows (ABSENT: no row),
// with the model's view, before the observation resolves it.
func (m *machine) snapshotRows(o model.Observed) {
	e := m.last()
	if e == nil {
		return
	}
	m.snapshotModel()
	e.Rows = map[string]string{}
	for id, r := range o.Rows {
		e.Rows[id] = r.Status.String()
		if _, ok := e.Model[id]; !ok {
			e.Model[id] = model.Absent.String()
		}
	}
	for id := range e.Model {
		if _, ok := e.Rows[id]; !ok {
			e.Rows[id] = model.Absent.String()
		}
	}
}

// readBackForReport records the statuses of a step that failed before its
// read-back: the model's, and the database's if a read succeeds (the
// check fails anyway; the read only shows where the two part).
func (m *machine) readBackForReport() {
	var rows []Row
	if err := m.doAs(harness.Actor{Role: harness.Operator}, harness.SpentReadBacks, func(ctx context.Context) (err error) { rows, err = m.subj.Rows(ctx); return }); err != nil {
		m.snapshotModel()
		return
	}
	o, _ := observed(m.opts.Semantics, rows, nil)
	m.snapshotRows(o)
}
