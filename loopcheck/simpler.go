package loopcheck

import (
	"time"

	"github.com/outboxcheck/outboxcheck/faults"
)

// simpler lists the steps that could stand for st in a shorter story,
// simplest first: fewer payments, dispatcher 0, a fault that strikes at
// once, the first message, UTC, half as long a pause or held
// transaction, a poison for ever. A broker window keeps its length: a
// shorter one is no simpler to read, and races more. A settle pause
// has none: it is there so that the story does not race.
func simpler(st Step) []Step {
	var out []Step
	with := func(f func(*Step)) {
		c := st
		f(&c)
		if c != st {
			out = append(out, c)
		}
	}
	switch st.Kind {
	case "commit":
		with(func(c *Step) { c.N = 1 })
	case "kill", "restart", "stop":
		with(func(c *Step) { c.N = 0 })
	case "redeliver", "crash-consumer", "slow-payment":
		with(func(c *Step) { c.N = 0 })
	case "partition":
		with(func(c *Step) { c.After = 0 })
		with(func(c *Step) { c.Fault = faults.Loop[0] })
	case "poison":
		// For ever first: a poison that wears off races the retries
		// (and a killed relay's uncounted attempt); one that never does
		// reaches the dead letter every time.
		with(func(c *Step) { c.After, c.For, c.Aim = 0, 0, 0 })
		with(func(c *Step) { c.N = 0 })
		if st.After > 1 {
			with(func(c *Step) { c.After = 1 })
		}
	case "timezone":
		with(func(c *Step) { c.Zone = "UTC" })
	case "broker-link":
		with(func(c *Step) { c.Fault = faults.Loop[0] })
	case "broker-slow":
		with(func(c *Step) { c.N = min(c.N, 1) })
	case "pause", "hold-tx":
		if !st.Settle {
			with(func(c *Step) { c.For = shorter(c.For) })
		}
	}
	return out
}

// shorter halves a window, down to 20 ms.
func shorter(d time.Duration) time.Duration {
	return max(d/2, min(d, 20*time.Millisecond))
}
