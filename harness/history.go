package harness

import (
	"fmt"
	"strings"
	"time"
)

// Entry is one recorded action: who did what with which inputs, what came
// back, and what the model expected. Clock is the harness's time, never
// the wall clock, so histories of one seed are identical.
type Entry struct {
	// Step numbers the entry: the step contract's every entry is a step;
	// a loop schedule's step may record several, which share its number,
	// and its drain's are 0.
	Step   int
	Clock  time.Time
	Action string
	Actor  string
	Input  string
	Result string
	Expect string
	// Outcome is the call's outcome: OutcomeOK, OutcomeFailed or
	// OutcomeUnknown; empty for an action that calls no subject.
	Outcome string
	// Broker lists the event_ids of the messages the broker accepted
	// during this step, duplicates included.
	Broker []string
	// Model and Rows are every event's status after this step, event_id
	// → status: Model as the model expected it ("A|B": either, an unknown
	// outcome), Rows as the database showed it (ABSENT: no row). Rows is
	// nil where the step was not read back (a multi-step action's inner
	// steps, or a step that failed before its read-back).
	Model, Rows map[string]string
}

func (e Entry) String() string {
	s := fmt.Sprintf("%3s  %s  %-15s %-12s %s", StepNumber(e.Step), e.Clock.Format("15:04:05.000000"), e.Action, e.Actor, e.Input)
	if e.Result != "" {
		s += " → " + e.Result
	}
	if e.Expect != "" {
		s += "  (model: " + e.Expect + ")"
	}
	return s
}

// StepNumber prints an entry's step: its number, or "end" for 0, an
// entry after a loop schedule's last step (its drain and judge).
func StepNumber(n int) string {
	if n == 0 {
		return "end"
	}
	return fmt.Sprint(n)
}

// History is the record of one check.
type History struct {
	Entries []Entry
	// Shrinking says the check was a shrink run of a failure already
	// found, not a check of its own (Options.OnCheck sees both).
	Shrinking bool `json:"-"`
}

// Add appends e as the next step and returns it.
func (h *History) Add(e Entry) *Entry {
	e.Step = len(h.Entries) + 1
	h.Entries = append(h.Entries, e)
	return &h.Entries[len(h.Entries)-1]
}

// Story renders the history as numbered lines.
func (h *History) Story() string {
	var b strings.Builder
	for _, e := range h.Entries {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// Clone is a copy of h whose entries later steps do not change.
func (h *History) Clone() *History {
	return &History{Entries: append([]Entry(nil), h.Entries...)}
}

// Outcomes of a recorded call, in Jepsen's sense (:ok, :fail, :info).
const (
	OutcomeOK      = "ok"      // the call returned no error
	OutcomeFailed  = "failed"  // it returned an error and took no effect
	OutcomeUnknown = "unknown" // it returned an error that leaves its effect unknown
)
