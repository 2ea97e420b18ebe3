package stepcheck

import (
	"fmt"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/model"
)

// report fails the check on the first problem, most specific property first.
//
// rapid takes two failures to be the same when their message and the line
// that failed are: it shrinks only towards the same failure, and gives up
// shrinking when a replay of one input fails differently. So the message
// is the property alone (the details and the story go to the log): with
// concurrent steps the details (which claim took which row) may differ from
// replay to replay while the bug is the same. And while shrinking, another
// property's failure fails from another line, so rapid does not drift to
// a counterexample of some other property.
func (m *machine) report(t *rapid.T, ps []model.Problem) {
	p, ok := model.First(ps)
	if !ok {
		return
	}
	m.judgeSubject(t, brokenInsteadOfViolation) // a broken operation explains what follows from it
	p.Detail += m.definiteHint()
	if e := m.last(); e != nil {
		e.Expect = p.String() // where the model and the subject part ways
		m.flushBroker()
		if e.Rows == nil {
			m.readBackForReport() // failed before its read-back
		}
	}
	m.logf("property violated: %s: %s\ncounterexample: %s\n%s", p.Property, p, harness.Count(len(m.hist.Entries), "steps"), m.hist.Story())
	if f := m.run.sum.Failure; f != nil && f.Property != p.Property {
		t.Fatalf("property violated: %s (shrinking a failure of %q: not the same failure)", p.Property, f.Property)
	}
	m.run.record(harness.Failure{Property: p.Property, Message: p.Detail, History: m.hist.Clone()})
	t.Fatalf("property violated: %s", p.Property)
}

// infra fails the check as an infrastructure error: never a property.
//
// While a violation is being shrunk, the candidate is given up instead:
// it passes, and the violation stays the verdict (shrinkguard.go).
func (m *machine) infra(t *rapid.T, what string, err error) {
	if m.early != "" {
		what += " (ended early: " + m.early + ")"
	}
	if m.run.shrinkingViolation() {
		m.run.discard(fmt.Sprintf("a candidate met infrastructure trouble: %s: %v", what, err))
	}
	m.run.record(harness.Failure{Infrastructure: true, Message: fmt.Sprintf("%s: %v", what, err), History: m.hist.Clone()})
	t.Fatalf("infrastructure error: %s: %v", what, err)
}
