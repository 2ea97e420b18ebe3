package killmatrix_test

import (
	"context"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/selftest/killmatrix"
)

func TestMain(m *testing.M) { harness.NoFailFilesUnlessAsked(); pgscratch.Main(m) }

// maxSteps bounds a shrunk counterexample: reaching DEAD alone takes
// 3 × (claim, publish, mark failed, wait).
const maxSteps = 25

// shrinkRuns is each row's shrink budget, in replays.
const shrinkRuns = 300

// TestKillMatrix: every step-contract mutant is killed, by the property
// that names its bug, with a short counterexample; the reference passes,
// fault-free, under faults and with concurrent steps. The loop contract's
// rows are TestLoopKillMatrix's (./loopmatrix), a package of its own so
// that go test runs the two side by side: a loop schedule mostly waits
// on real time. Seed 1 unless -rapid.seed says otherwise, so a run is
// reproducible. It runs without -race (CI runs it on its own): shrinking
// re-runs checks hundreds of times, and the race detector's slowdown would
// turn a shrink-time limit into a flaky counterexample length.
//
//	go test -v ./selftest/killmatrix/
func TestKillMatrix(t *testing.T) {
	if raceEnabled {
		t.Skip("the kill matrix runs without -race: go test ./selftest/killmatrix/")
	}
	// Shrinking deletes a counterexample's steps within a few hundred
	// replays; what rapid does after that is lower the drawn values one
	// replay at a time, thousands of replays that never change a step
	// count. The budget is replays, not seconds, so that a loaded machine
	// gets the same counterexamples (a 10 s budget left 40-step stories
	// under load); the time is only a backstop.
	cfg := killmatrix.Config{
		Cluster:    pgscratch.Shared(t),
		Budget:     harness.Budget{Checks: 300, Seed: 1, ShrinkTime: 2 * time.Minute}, // a given -rapid.* flag wins (Budget.Apply)
		ShrinkRuns: shrinkRuns,
		Reference:  true,
	}
	_, err := killmatrix.Run(context.Background(), cfg, func(r killmatrix.Row) {
		t.Log(killmatrix.Line(r))
		switch {
		case !r.OK():
			t.Errorf("%s: %s (want %q):\n%s", r.Subject, r.Verdict(), r.Want, r.Output)
		case r.Want != "" && r.Steps() > maxSteps:
			t.Errorf("%s: counterexample of %d steps is not short:\n%s", r.Subject, r.Steps(), r.Output)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}
