package harness

import (
	"flag"
	"os"
	"testing"
)

// A -rapid.* flag given on the command line wins over a test's Budget:
// `go test -rapid.checks=1000` scales it; the budget sets the others.
func TestBudgetLeavesCommandLineFlags(t *testing.T) {
	prepareRapid()
	f := flag.Lookup("rapid.checks")
	before := f.Value.String()
	oldArgs := os.Args
	os.Args = []string{"x.test", "-test.v", "-rapid.checks=777"}
	f.Value.Set("777") // as flag parsing did
	defer func() { os.Args = oldArgs; f.Value.Set(before) }()
	restore := Budget{Checks: 5, Seed: 9}.Apply()
	got := f.Value.String()
	seed := flag.Lookup("rapid.seed").Value.String()
	restore()
	if got != "777" {
		t.Fatalf("rapid.checks = %s under the budget, want the command line's 777", got)
	}
	if seed != "9" {
		t.Fatalf("rapid.seed = %s, want the budget's 9 (not on the command line)", seed)
	}
	if g := rapidFlagsGiven([]string{"-rapid.seed", "3", "--rapid.steps=4", "-run", "X", "-args", "-rapid.checks=1"}); !g["rapid.seed"] || !g["rapid.steps"] || g["rapid.checks"] || len(g) != 2 {
		t.Fatalf("rapidFlagsGiven = %v", g)
	}
}
