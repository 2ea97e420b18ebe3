package main_test

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/cdcloop"
	"github.com/outboxcheck/outboxcheck/adapters/loopsubjects"
	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/proccheck"
)

// The shared server can run the CDC relay too.
func TestMain(m *testing.M) {
	harness.NoFailFilesUnlessAsked()
	pgscratch.MainWith(m, pgscratch.Options{Settings: cdcloop.ServerSettings})
}

// The reference relay and four of its loop mutants, and the CDC relay and
// one of its mutants, get the same verdicts in process and as processes,
// on the same seeds: a relay passes, each mutant is killed by its own
// property. (The schedules differ: a
// process can be frozen, so its schedules also draw freezes.)
func TestSameVerdictsInProcessAndAsProcesses(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "refprocess")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, c := range []struct {
		mutant string
		checks int
		seeds  uint64
	}{{"reference", 20, 2}, {"delete-dead", 100, 2}, {"never-dead", 100, 2}, {"naive-utc-due", 100, 2}, {"mark-unfenced", 100, 2}, {"cdc", 20, 1}, {"cdc-confirm-whole", 100, 1}} {
		m, ok := loopsubjects.ByName(c.mutant)
		if !ok {
			t.Fatalf("no loop subject %q", c.mutant)
		}
		for seed := uint64(1); seed <= c.seeds; seed++ {
			argv := []string{bin, "-subject", c.mutant}
			in := verdict(t, m, m.New, seed, c.checks, m.RecoveryTime())
			out := verdict(t, m, proccheck.New(proccheck.Command{Argv: argv}), seed, c.checks, proccheck.Recovery)
			t.Logf("%s, seed %d: in process %s; as processes %s", m.Name, seed, in, out)
			if in != out {
				t.Errorf("%s, seed %d: in process %s, as processes %s", m.Name, seed, in, out)
			}
		}
	}
}

// verdict is "passed" or "killed by its property", or what else came.
// A process declares the longer recovery of one (proccheck.Recovery): its
// relays start as processes again after kills and at the drain.
func verdict(t *testing.T, m refloop.Mutant, newSubject loopcheck.NewSubject, seed uint64, checks int, recovery time.Duration) string {
	t.Helper()
	restore := harness.Budget{Checks: checks, Seed: seed, ShrinkTime: time.Nanosecond}.Apply()
	defer restore()
	rec := harness.NewRecorder(t.Name(), nil)
	res := loopcheck.Run(rec, newSubject, loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Recovery: recovery,
		MaxAttempts: m.MaxAttempts, Parallel: 2})
	switch f := res.Failure; {
	case f == nil:
		return "passed"
	case m.New != nil && m.Kills != "" && m.KilledBy(f.Property):
		return "killed by its property"
	default:
		return "failed: " + res.Story()
	}
}
