// Package loopmatrix holds the loop contract's rows of the kill matrix,
// apart from TestKillMatrix's step rows so that go test runs the two
// packages side by side (rapid's budget is process-wide, and the rows
// differ in it).
package loopmatrix_test

import (
	"context"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/loopsubjects"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/impl/mutants"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/selftest/killmatrix"
)

// confirm is how many times each shrunk story runs again: the issue's
// bar is 9 of 10.
var (
	confirm = flag.Int("confirm", 5, "how many times each loop row's shrunk schedule runs again")
	only    = flag.String("only", "", "comma-separated loop mutants: only their rows (no passing subject's)")
	stories = flag.Bool("stories", false, "log each row's output (a killed row's story too), not only a failed row's")
)

// The shared server runs with what every loop row needs (the CDC
// relay reads the write-ahead log).
func TestMain(m *testing.M) {
	harness.NoFailFilesUnlessAsked()
	pgscratch.MainWith(m, pgscratch.Options{Settings: loopsubjects.Settings(loopsubjects.Names()...)})
}

// TestLoopKillMatrix: every loop mutant is killed by the property that
// names its bug (or one its catalog lists as just as true), and the
// reference relay and the CDC relay pass 60 schedules each. Seed 1 unless -rapid.seed says
// otherwise. Loop counterexamples get 20 s of the loop shrinker each
// (several candidates at once, each tried twice), and are not held to a
// length: real time decides how far 20 s gets (3 to 20 steps on an idle
// machine); each row logs how often its story came back.
//
//	go test -v ./selftest/killmatrix/loopmatrix/ [-rapid.seed N] [-confirm 10] [-only cdc-late-slot,...] [-stories]
func TestLoopKillMatrix(t *testing.T) {
	if raceEnabled {
		t.Skip("the loop rows of the kill matrix run without -race: go test ./selftest/killmatrix/loopmatrix/")
	}
	cfg := killmatrix.Config{
		Cluster:    pgscratch.Shared(t),
		Budget:     harness.Budget{Seed: 1}, // a given -rapid.seed wins (Budget.Apply)
		Mutants:    []mutants.Mutant{},      // no step rows: TestKillMatrix has them
		Loop:       true,
		LoopBudget: killmatrix.LoopBudget{ShrinkTime: 20 * time.Second, Confirm: *confirm},
	}
	if *only != "" {
		cfg.LoopMutants = strings.Split(*only, ",")
	}
	_, err := killmatrix.Run(context.Background(), cfg, func(r killmatrix.Row) {
		t.Log(killmatrix.Line(r))
		if *stories && r.OK() {
			t.Log(r.Output)
		}
		if !r.OK() {
			t.Errorf("%s: %s (want %q):\n%s", r.Subject, r.Verdict(), r.Want, r.Output)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}
