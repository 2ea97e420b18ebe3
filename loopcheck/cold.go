package loopcheck

// A cold schedule begins with every relay down: the relays are not
// started with it, and each starts at its first restart step, or at the
// drain. What the producer commits first is then committed before any
// relay ever ran, as when relays are deployed after the application began
// writing, or all of them were down at once when it started: a relay
// that reads only what comes after its own start (a replication slot
// created when it first runs, a stream begun at the server's current
// position) never sees it. It is not drawn: the shrinker tries it as a
// canonical shape (coldStart), which does not race the relays' start as
// a drawn schedule's first commit does.

// cold says whether s begins with its relays down.
func (s Schedule) cold() bool {
	for _, st := range s {
		if st.Kind == "cold" {
			return true
		}
	}
	return false
}

// coldStep tells the story of a cold schedule's beginning.
func (c *check) coldStep() {
	c.tally.injected("cold", "relays", true, 0)
	c.record("Cold", "operator", "every relay", "not started with the schedule: each starts at its restart step, or at the drain")
}

// coldStart is the cold-start shape: the failing schedule's time zone,
// the relays down from the start, a commit; the drain then starts them.
func (sh *shrinker) coldStart() Schedule {
	return append(sh.zoned(), Step{Kind: "cold"}, Step{Kind: "commit", N: 1})
}
