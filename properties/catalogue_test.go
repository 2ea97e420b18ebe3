package properties

import (
	"slices"
	"testing"

	"github.com/outboxcheck/outboxcheck/model"
)

// Every property the model can name is in the catalogue with its kind,
// once, and every entry says what it checks and on what record.
func TestCatalogueHasTheModelsProperties(t *testing.T) {
	for _, c := range []struct {
		names []string
		kind  Kind
	}{{model.SafetyProperties, Safety}, {model.LivenessProperties, Liveness}} {
		for _, n := range c.names {
			p, ok := Lookup(n)
			if !ok || p.Kind != c.kind {
				t.Errorf("%s: %+v, %v; want a %s property", n, p, ok, c.kind)
			}
		}
	}
	var seen []string
	for _, p := range Catalogue {
		if slices.Contains(seen, p.Name) {
			t.Errorf("%s twice", p.Name)
		}
		seen = append(seen, p.Name)
		if p.Checks == "" || p.Record == "" || (p.Kind != Safety && p.Kind != Liveness) {
			t.Errorf("%s: incomplete entry %+v", p.Name, p)
		}
	}
}
