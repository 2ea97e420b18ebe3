package stepcheck

import (
	"fmt"

	"github.com/outboxcheck/outboxcheck/harness"
)

// counts is every operation's CallCount.
func (c *calls) counts() map[string]harness.CallCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]harness.CallCount{}
	for op, o := range c.ops {
		cc := harness.CallCount{Calls: o.ok + o.own + o.other, OK: o.ok, Failed: o.failed}
		if o.firstFailed != nil {
			cc.FirstError = normalize(o.firstFailed.Error())
		}
		out[op] = cc
	}
	return out
}

// definiteHint is added to a problem found right after a call the subject
// called a definite failure (Indeterminate false): if that call did take
// effect, the disagreement is Indeterminate's misclassification, not the
// outbox's state machine, and the message says where to look.
func (m *machine) definiteHint() string {
	e := m.last()
	if e == nil || e.Outcome != harness.OutcomeFailed || harnessFailed[e.Action] {
		return ""
	}
	return fmt.Sprintf(" (hint: the %s just before failed with an error your Indeterminate called definite, meaning it took no effect: %s; if such an error can follow an effect (a lost reply), Indeterminate must say true)",
		e.Action, e.Result)
}

// harnessFailed are the steps whose definite failure is the harness's own
// doing (its broker refused the publish; it crashed the actor), not a
// classification of the subject's to question.
var harnessFailed = map[string]bool{"Publish": true, "CrashConsumer": true, "CrashMidMark": true}
