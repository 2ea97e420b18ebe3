package reports

import (
	"fmt"
	"testing"

	"github.com/outboxcheck/outboxcheck/harness"
)

// Fill carries what the history recorded per step into the report.
func TestFillCarriesStepData(t *testing.T) {
	e := harness.Entry{Step: 1, Action: "Publish", Actor: "dispatcher-0", Outcome: harness.OutcomeUnknown,
		Broker: []string{"e1"}, Model: map[string]string{"e1": "PUBLISHING"}, Rows: map[string]string{"e1": "PUBLISHED"}}
	var r Report
	r.Fill(harness.Summary{Failure: &harness.Failure{Property: "fencing", History: &harness.History{Entries: []harness.Entry{e}}}})
	s := r.Failure.Steps[0]
	if got := fmt.Sprintln(s.Outcome, s.Broker, s.Model, s.Rows); got != "unknown [e1] map[e1:PUBLISHING] map[e1:PUBLISHED]\n" {
		t.Errorf("step carries %s", got)
	}
}
