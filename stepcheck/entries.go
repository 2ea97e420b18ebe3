// The history's entries: record opens one for a step, result words a
// call's outcome on it, normalize keeps it the same from run to run.

package stepcheck

import (
	"regexp"

	"github.com/outboxcheck/outboxcheck/harness"
)

func (m *machine) record(action string, a harness.Actor, input string) *harness.Entry {
	m.flushBroker()
	m.early = ""
	return m.hist.Add(harness.Entry{Clock: m.m.Now, Action: action, Actor: a.String(), Input: input})
}

func result(err error, ok string) string {
	if err != nil {
		return "error: " + normalize(err.Error())
	}
	return ok
}

// volatile matches the parts of error texts that differ between runs of
// one seed (ports, database names), so that histories compare equal.
var volatile = regexp.MustCompile(`127\.0\.0\.1:\d+|outboxcheck_[0-9a-f]{16}`)

func normalize(s string) string { return volatile.ReplaceAllString(s, "…") }
