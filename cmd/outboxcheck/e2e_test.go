package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outboxcheck/outboxcheck/reports"
)

func cli(t *testing.T, args ...string) (code int, stdout string) {
	t.Helper()
	var out, errs strings.Builder
	code = exitCode(run(args, &out, &errs), &errs)
	t.Logf("outboxcheck %s → exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errs.String())
	return code, out.String()
}

// A failing run writes its reports, and replay runs the same
// counterexample again and exits as the run did.
func TestRunReportReplay(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	junit := filepath.Join(t.TempDir(), "junit.xml")
	code, _ := cli(t, "run", "--subject", "claim-no-attempts", "--no-faults", "--checks", "50", "--seed", "5",
		"--shrink-time", "5s", "--report-dir", dir, "--junit", junit)
	if code != exitViolation {
		t.Fatalf("exit %d, want %d", code, exitViolation)
	}
	rep, err := reports.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != reports.Violation || rep.Failure == nil || rep.Failure.Property != "backoff" || rep.Failure.FailFile == "" || rep.Seed != 5 {
		t.Fatalf("report: %+v", rep)
	}
	for _, f := range []string{"report.html", "report.md", rep.Failure.FailFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if b, err := os.ReadFile(junit); err != nil || !strings.Contains(string(b), `<failure message=`) {
		t.Fatalf("junit: %v\n%s", err, b)
	}
	code, out := cli(t, "replay", dir)
	if code != exitViolation || !strings.Contains(out, "reproduced: property violated: backoff") || !strings.Contains(out, "model:  [backoff]") {
		t.Fatalf("replay exit %d:\n%s", code, out)
	}
}

// Two shards cover the checks of one run, and their merge passes.
func TestShardsMerge(t *testing.T) {
	a, b, m := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b"), filepath.Join(t.TempDir(), "m")
	for i, dir := range []string{a, b} {
		if code, _ := cli(t, "run", "--no-faults", "--checks", "10", "--seed", "9", "--shard", []string{"1/2", "2/2"}[i], "--report-dir", dir); code != exitOK {
			t.Fatalf("shard %d: exit %d", i+1, code)
		}
	}
	ra, _ := reports.Read(a)
	rb, _ := reports.Read(b)
	if ra.Seed == rb.Seed {
		t.Fatal("both shards ran the same seeds")
	}
	if code, _ := cli(t, "report", "merge", "--out", m, a, b); code != exitOK {
		t.Fatalf("merge: exit %d", code)
	}
	merged, err := reports.Read(m)
	if err != nil || merged.Checks != 10 || len(merged.Merged) != 2 {
		t.Fatalf("merged %+v, %v", merged, err)
	}
}
