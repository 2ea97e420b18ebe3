package loopsubjects_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/outboxcheck/outboxcheck/adapters/loopsubjects"
)

// loopProperties are the properties a loop mutant may be killed by.
var loopProperties = map[string]bool{"no-loss": true, "timely-delivery": true, "no-phantom": true,
	"effect-at-most-once": true, "effect-exactly-once": true, "dead-letter": true, "dead-exclusive": true,
	"backoff": true, "relay-isolation": true, "relay-liveness": true, "takeover": true, "head-of-line": true, "crash-loop": true, "publish-at-most-once": true, "dedupe-window": true, "fencing": true}

// Every loop mutant (the reference relay's and the CDC relay's) has a unique name, a bug, a constructor and a
// property of the loop contract, and is in docs/properties.md's table with it.
func TestCatalog(t *testing.T) {
	readme, err := os.ReadFile("../../docs/properties.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range loopsubjects.Mutants {
		if seen[m.Name] {
			t.Errorf("%s: listed twice", m.Name)
		}
		seen[m.Name] = true
		if !loopProperties[m.Kills] || m.Bug == "" || m.New == nil {
			t.Errorf("%s: kills %q, bug %q, constructor %v", m.Name, m.Kills, m.Bug, m.New != nil)
		}
		for _, p := range m.Also {
			if !loopProperties[p] || p == m.Kills || !m.KilledBy(p) {
				t.Errorf("%s: also killed by %q", m.Name, p)
			}
		}
		row := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(m.Name) + "` \\| `" + regexp.QuoteMeta(m.Kills) + "`[^|\n]* \\|$")
		if !row.Match(readme) {
			t.Errorf("%s: no row of docs/properties.md saying it is killed by %s", m.Name, m.Kills)
		}
	}
}
