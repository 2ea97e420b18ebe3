package loopcheck

import (
	"fmt"

	"github.com/outboxcheck/outboxcheck/harness"
)

// relayQuit notes that incarnation name's Dispatch returned, with err,
// while the harness had neither killed nor stopped it. The first is kept.
func (c *check) relayQuit(name string, err error) {
	c.quitMu.Lock()
	defer c.quitMu.Unlock()
	if c.quitter == "" {
		c.quitter, c.quitErr = name, err
	}
}

// relayLiveness: a relay's loop runs until the harness stops or kills it
// (the contract's Dispatch). One that returns on its own no longer
// relays, while its process, its readiness check and every other relay
// look healthy: a deadline taken for shutdown, a fatal error that should
// have been retried. An adapter whose library gives up by design models
// the supervisor that restarts it (docs/adapters.md).
func (c *check) relayLiveness() *harness.Failure {
	c.quitMu.Lock()
	name, err := c.quitter, c.quitErr
	c.quitMu.Unlock()
	if name == "" {
		return nil
	}
	return c.fail("relay-liveness", fmt.Sprintf("relay %s stopped on its own (Dispatch returned %s) while nothing stopped or killed it: it relays no more, and nothing says it died",
		name, result(err, "nil")))
}
