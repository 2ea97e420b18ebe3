package loopcheck

import (
	"slices"
	"time"

	"path/filepath"
	"testing"

	"pgregory.net/rapid"
)

// Every step a schedule can draw must pass the file's validation, or a
// saved counterexample holding it cannot be replayed (a "wedge" step once
// made `outboxcheck replay` refuse its own schedule).
func TestEveryDrawnStepKindReadsBack(t *testing.T) {
	seen := map[string]bool{}
	rapid.Check(t, func(t *rapid.T) {
		for range 100 {
			st := drawStep(t, swarm(t, []string{"freeze", "schema-change"}), []string{"producer", "dispatcher-0"}, 2, []time.Duration{300 * time.Millisecond, 30 * time.Second})
			seen[st.Kind] = true
			if err := st.valid(2); err != nil {
				t.Fatalf("%s: %v", st, err)
			}
		}
	})
	kinds := append(slices.Clone(stepKinds), "freeze", "schema-change") // a Pauser's and a SchemaChanger's too
	for _, k := range kinds {
		if !seen[k] {
			t.Errorf("step kind %q never drawn in 100 checks of 100 steps", k)
		}
	}
	path := filepath.Join(t.TempDir(), "schedule.json")
	var s Schedule
	for _, k := range kinds {
		s = append(s, Step{Kind: k, Zone: "UTC", At: "before-commit", Fault: "sever", For: time.Second})
	}
	s = append(s, Step{Kind: "timezone", Zone: "Asia/Tokyo"}, Step{Kind: "cold"}) // and the shrinker's own
	if err := WriteFile(path, File{Property: "no-loss", Schedule: s}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); err != nil {
		t.Fatal(err)
	}
}
