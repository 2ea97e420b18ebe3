package properties_test

import (
	"testing"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/impl/mutants"
	"github.com/outboxcheck/outboxcheck/internal/pgtest"
	"github.com/outboxcheck/outboxcheck/properties"
)

// Every broken subject must fail, with the property that names its bug,
// shrunk to a short counterexample.
func TestBrokenSubjectsAreCaught(t *testing.T) {
	setFlag(t, "rapid.checks", "500") // a budget, not a cost: the run stops at the first failure
	if raceEnabled {
		setFlag(t, "rapid.shrinktime", "60s") // rapid's 30 s buys a third of the shrinking under -race
	}
	for _, m := range mutants.All {
		t.Run(m.Name, func(t *testing.T) {
			opts := properties.Options{DatabaseURL: pgtest.Database(t).URL}
			if m.NeedsFaults {
				opts = faultOptions(t)
			}
			c := runCaptured(t, func(c *capture) {
				properties.Run(c, reference.Mutated(m), opts)
			})
			out := c.out.String()
			if !c.Failed() {
				t.Fatalf("mutant %s survived: %s", m.Name, m.Bug)
			}
			prop, steps := verdict(out)
			if prop != m.Kills {
				t.Fatalf("mutant %s failed with %q, want %q:\n%s", m.Name, prop, m.Kills, out)
			}
			t.Logf("killed by %s, counterexample of %d steps", prop, steps)
			if testing.Verbose() {
				t.Log(out)
			}
			if steps > 25 { // reaching DEAD alone takes 3 × (claim, publish, mark failed, wait)
				t.Errorf("counterexample of %d steps is not short:\n%s", steps, out)
			}
		})
	}
}
