package properties

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// CallCount is how one of the subject's operations fared in a run: a
// kind of call that was made and never succeeded is called out, as a
// fault injected but never struck is, so that a run cannot pass quietly
// while an operation never worked (a redrive that always times out, say;
// one that always fails with an error of its own is a subject error).
type CallCount struct {
	Calls, OK int
	// Failed counts the failures the harness did not cause on purpose,
	// and FirstError is the first of them.
	Failed     int
	FirstError string
}

// counts is every operation's CallCount.
func (c *calls) counts() map[string]CallCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]CallCount{}
	for op, o := range c.ops {
		cc := CallCount{Calls: o.ok + o.own + o.other, OK: o.ok, Failed: o.failed}
		if o.firstFailed != nil {
			cc.FirstError = normalize(o.firstFailed.Error())
		}
		out[op] = cc
	}
	return out
}

// NeverSucceeded lists the operations that were called, failed (not on
// the harness's purpose) and never once succeeded, with their count and
// first error.
func (s Summary) NeverSucceeded() map[string]string {
	out := map[string]string{}
	for op, c := range s.Calls {
		if c.OK == 0 && c.Failed > 0 {
			out[op] = fmt.Sprintf("%d calls, none succeeded; the first failed with: %s", c.Calls, c.FirstError)
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
	if e == nil || e.Outcome != OutcomeFailed || harnessFailed[e.Action] {
		return ""
	}
	return fmt.Sprintf(" (hint: the %s just before failed with an error your Indeterminate called definite, meaning it took no effect: %s; if such an error can follow an effect (a lost reply), Indeterminate must say true)",
		e.Action, e.Result)
}

// harnessFailed are the steps whose definite failure is the harness's own
// doing (its broker refused the publish; it crashed the actor), not a
// classification of the subject's to question.
var harnessFailed = map[string]bool{"Publish": true, "CrashConsumer": true, "CrashMidMark": true}
