package properties

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// CallCount is how one kind of subject call fared over a run's generated
// checks: a kind that was called and never succeeded is called out, as a
// fault injected but never struck is, so that a run cannot pass because
// an operation never worked (a redrive that always fails, say).
type CallCount struct {
	Calls, OK  int
	FirstError string // the first error, for a kind that never succeeded
}

// countCall adds a call of kind action that returned err (generated
// checks only: shrinking replays them). A call the harness crashed on
// purpose fails by design: it is not counted.
func (m *machine) countCall(action string, err error) {
	if m.run.sum.ShrinkRuns > 0 || crashedOnPurpose[action] {
		return
	}
	if m.sum.Calls == nil {
		m.sum.Calls = map[string]CallCount{}
	}
	c := m.sum.Calls[action]
	c.Calls++
	switch {
	case err == nil:
		c.OK++
	case c.FirstError == "":
		c.FirstError = normalize(err.Error())
	}
	m.sum.Calls[action] = c
}

var crashedOnPurpose = map[string]bool{"CrashConsumer": true, "CrashMidMark": true}

// NeverSucceeded lists the kinds of call that were made and never
// succeeded, with their first error, in order of name.
func (s Summary) NeverSucceeded() map[string]string {
	out := map[string]string{}
	for k, c := range s.Calls {
		if c.Calls > 0 && c.OK == 0 {
			out[k] = fmt.Sprintf("%d calls, none succeeded; the first failed with: %s", c.Calls, c.FirstError)
		}
	}
	return out
}

func neverSucceededText(never map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(never)) {
		parts = append(parts, k+" ("+never[k]+")")
	}
	return strings.Join(parts, ", ")
}

// definiteHint is added to a problem found right after a call the subject
// called a definite failure (Indeterminate false): if that call did take
// effect, the disagreement is Indeterminate's misclassification, not the
// outbox's state machine, and the message says where to look.
func (m *machine) definiteHint() string {
	e := m.last()
	if e == nil || e.Outcome != OutcomeFailed {
		return ""
	}
	return fmt.Sprintf(" (hint: the %s just before failed with an error your Indeterminate called definite, meaning it took no effect: %s; if such an error can follow an effect (a lost reply), Indeterminate must say true)",
		e.Action, e.Result)
}
