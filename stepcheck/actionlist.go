package stepcheck

import (
	"fmt"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/model"
)

// weights say how often rapid should pick each action relative to the
// others: the verbs where the outbox's bugs live come up more often.
var weights = map[string]int{
	"Commit": 3, "Claim": 3, "Publish": 3, "MarkPublished": 3, "MarkFailed": 2,
	"AdvanceClock": 3, "Deliver": 2, "CrashDispatcher": 1, "RestartDispatcher": 1,
	"CrashConsumer": 1, "Rollback": 1, "Redrive": 1, "Cleanup": 1, "Rescue": 2,
	"Partition": 2, "Heal": 2, "CrashDispatcherMidMark": 1, "CrashDatabase": 1, "ClaimTogether": 3, "DeliverTogether": 2,
}

// actions lists the state machine's actions; each is its own entry so
// shrinking can drop it. An action of weight w is listed w times (as
// "Name", "Name#2", …) because rapid picks keys uniformly. An action the
// check's swarm leaves out is listed all the same and skips, so that the
// step draws another: were it left off the list, every later action's
// draw would name another action once the shrinker turns it back on (its
// draw shrinks to "on"), and no step of the counterexample would keep its
// meaning. Skipped, only the draws that named it change.
func (m *machine) actions() map[string]func(*rapid.T) {
	out := map[string]func(*rapid.T){}
	for name, fn := range m.byName() {
		if !m.swarm.on(name) {
			fn = func(*rapid.T) { skip("the check's swarm leaves out " + name) }
		}
		out[name] = fn
		for i := 2; i <= weights[name]; i++ {
			out[fmt.Sprintf("%s#%d", name, i)] = fn
		}
	}
	return out
}

// byName is every action the run has, by name.
func (m *machine) byName() map[string]func(*rapid.T) {
	byName := map[string]func(*rapid.T){
		"Commit": m.Commit, "Rollback": m.Rollback, "Claim": m.Claim, "Publish": m.Publish,
		"MarkPublished": m.MarkPublished, "MarkFailed": m.MarkFailed, "AdvanceClock": m.AdvanceClock,
		"CrashDispatcher": m.CrashDispatcher, "RestartDispatcher": m.RestartDispatcher,
		"Deliver": m.Deliver, "CrashConsumer": m.CrashConsumer, "Redrive": m.Redrive, "Cleanup": m.Cleanup,
	}
	sem := m.opts.Semantics
	for _, op := range []model.Operation{model.OpRedrive, model.OpCleanup} {
		if !sem.Has(op) {
			delete(byName, string(op))
		}
	}
	if sem.Rescue != nil {
		byName["Rescue"] = m.Rescue
	}
	if m.opts.Faults {
		byName["Partition"], byName["Heal"] = m.Partition, m.Heal
		byName["CrashDispatcherMidMark"] = m.CrashDispatcherMidMark
		if m.opts.CrashDatabase != nil {
			byName["CrashDatabase"] = m.CrashDatabase
		}
	}
	if m.opts.Concurrent {
		byName["ClaimTogether"], byName["DeliverTogether"] = m.ClaimTogether, m.DeliverTogether
	}
	return byName
}
