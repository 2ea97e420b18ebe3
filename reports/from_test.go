package reports

import (
	"fmt"
	"testing"

	"github.com/outboxcheck/outboxcheck/properties"
)

// Fill carries what the history recorded per step into the report.
func TestFillCarriesStepData(t *testing.T) {
	e := properties.Entry{Step: 1, Action: "Publish", Actor: "dispatcher-0", Outcome: properties.OutcomeUnknown,
		Broker: []string{"e1"}, Model: map[string]string{"e1": "PUBLISHING"}, Rows: map[string]string{"e1": "PUBLISHED"}}
	var r Report
	r.Fill(properties.Summary{Failure: &properties.Failure{Property: "fencing", History: &properties.History{Entries: []properties.Entry{e}}}})
	s := r.Failure.Steps[0]
	if got := fmt.Sprintln(s.Outcome, s.Broker, s.Model, s.Rows); got != "unknown [e1] map[e1:PUBLISHING] map[e1:PUBLISHED]\n" {
		t.Errorf("step carries %s", got)
	}
}
