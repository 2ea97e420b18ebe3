package mutants_test

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/outboxcheck/outboxcheck/impl/mutants"
	"github.com/outboxcheck/outboxcheck/model"
)

// Every mutant has a unique name, names a property that exists, changes
// something, and is in docs/properties.md's table with the property that
// kills it.
func TestCatalog(t *testing.T) {
	readme, err := os.ReadFile("../../docs/properties.md")
	if err != nil {
		t.Fatal(err)
	}
	props := append(slices.Clone(model.SafetyProperties), model.LivenessProperties...)
	seen := map[string]bool{}
	for _, m := range mutants.All {
		if seen[m.Name] {
			t.Errorf("%s: listed twice", m.Name)
		}
		seen[m.Name] = true
		if !slices.Contains(props, m.Kills) {
			t.Errorf("%s: kills %q, not a property", m.Name, m.Kills)
		}
		if m.Bug == "" {
			t.Errorf("%s: no Bug", m.Name)
		}
		if m.Queries == nil && m.Claim == nil && m.Consumer == nil && m.Producer == nil && m.MarkFailed == nil && m.Publish == nil {
			t.Errorf("%s: changes nothing", m.Name)
		}
		row := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(m.Name) + "`[^|]*\\| `" + regexp.QuoteMeta(m.Kills) + "` \\|$")
		if !row.Match(readme) {
			t.Errorf("%s: no docs/properties.md row saying it is killed by %s", m.Name, m.Kills)
		}
	}
}
