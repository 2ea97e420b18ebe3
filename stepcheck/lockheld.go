// Lock-held claims (model.Semantics.LockHeld): a claim is the row lock of
// the claimant's open transaction, so it ends when that session does. The
// harness makes the end certain and immediate wherever a dispatcher's
// session is cut: it ends the server's sessions of that dispatcher (a
// dying process's server side, which a real server also ends once it
// notices) and only then tells the model the claims are released. Where a
// dispatcher's call leaves its session unsure (a lost reply, a deadline,
// an error), the harness kills the dispatcher, so that what its open
// transaction held is settled before the next step.

package stepcheck

import (
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/model"
	"pgregory.net/rapid"
)

// releaseHolds ends dispatcher a's sessions on the server and releases
// its lock-held claims in the model. A failure to end them is kept for
// the next read-back to report as infrastructure.
func (m *machine) releaseHolds(a harness.Actor) {
	if !m.opts.Semantics.LockHeld || a.Role != harness.Dispatcher {
		return
	}
	if err := m.waitGone(appName(a)); err != nil && m.holdErr == nil {
		m.holdErr = err
	}
	m.m = model.Release(m.m, a.N)
}

// endLockHolders cuts every dispatcher and ends its server sessions
// before a check's Reset: a check that failed (or was cut short) left
// its claims' transactions open, and their locks would hold Reset up.
func (m *machine) endLockHolders() {
	if !m.opts.Semantics.LockHeld {
		return
	}
	for d := range m.opts.Dispatchers {
		m.crash(harness.Actor{Role: harness.Dispatcher, N: d})
	}
}

// endHolds tells the model that dispatcher a's server sessions were
// ended (by a settle), and with them its lock-held claims.
func (m *machine) endHolds(a harness.Actor) {
	if m.opts.Semantics.LockHeld && a.Role == harness.Dispatcher {
		m.m = model.Release(m.m, a.N)
	}
}

// afterDispatcherCall kills dispatcher d after a call of its that did not
// end done, where its claims are lock-held: its session (and so its open
// transaction) is in a state nobody knows.
func (m *machine) afterDispatcherCall(d int, err error) {
	if !m.opts.Semantics.LockHeld || m.outcome(err) == model.Done {
		return
	}
	m.crash(harness.Actor{Role: harness.Dispatcher, N: d})
	m.held[d] = nil
}

// reportHoldErr stops the check as infrastructure if a lock-holder's
// session could not be ended.
func (m *machine) reportHoldErr(t *rapid.T) {
	if err := m.holdErr; err != nil {
		m.holdErr = nil
		m.infra(t, "end a lock-holding dispatcher's sessions", err)
	}
}
