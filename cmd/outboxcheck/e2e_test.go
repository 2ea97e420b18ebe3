package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outboxcheck/outboxcheck/gate"
	"github.com/outboxcheck/outboxcheck/internal/chromium"
	"github.com/outboxcheck/outboxcheck/loopcheck"
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
	// A fail file rapid cannot use proves nothing: exit 2, never "NOT
	// reproduced" (rapid would pass over it and run a random check).
	fail := filepath.Join(dir, rep.Failure.FailFile)
	good, _ := os.ReadFile(fail)
	lines := strings.Split(strings.TrimSpace(string(good)), "\n")
	for name, body := range map[string]string{
		"garbage":   "\x00\x01 this is not a fail file\n",
		"truncated": strings.Join(lines[:len(lines)-len(lines)/2], "\n") + "\n",
	} {
		os.WriteFile(fail, []byte(body), 0o644)
		code, _, stderr := cliErr(t, "replay", dir)
		if code != exitUsage || !strings.Contains(lastLine(stderr), "cannot be replayed") {
			t.Errorf("%s fail file: exit %d, %q; want %d and \"cannot be replayed\"", name, code, lastLine(stderr), exitUsage)
		}
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
	// Each shard's report plots its checks over time; the merge, whose
	// shards each had their own clock, does not.
	for _, r := range []*reports.Report{ra, rb} {
		checkProgress(t, r)
	}
	if merged.Progress != nil {
		t.Errorf("the merge has progress: %+v", merged.Progress)
	}
	for dir, want := range map[string]bool{a: true, b: true, m: false} {
		dom, console := chromium.Render(t, filepath.Join(dir, "report.html"))
		if plot := strings.Contains(dom, `<svg id="rate"`); plot != want || len(console) > 0 {
			t.Errorf("%s: rate plot %v, want %v; console %v", dir, plot, want, console)
		}
	}
}

// checkProgress checks r's progress against its totals: a checkpoint per
// check, in order, whose steps add up to the run's, with fault counts
// that only grow, up to what the coverage counts.
func checkProgress(t *testing.T, r *reports.Report) {
	t.Helper()
	if len(r.Progress) != r.Checks {
		t.Fatalf("%d checkpoints for %d checks", len(r.Progress), r.Checks)
	}
	steps, prev := 0, reports.Checkpoint{}
	for i, c := range r.Progress {
		if c.Check != i+1 || c.At < prev.At || c.Faults < prev.Faults || c.Struck < prev.Struck || c.Struck > c.Faults {
			t.Fatalf("checkpoint %d after %d: %+v, %+v", i+1, i, c, prev)
		}
		steps, prev = steps+c.Steps, c
	}
	injected := r.Coverage.BrokerRefused + r.Coverage.BrokerAckLost
	for k, n := range r.Coverage.Crashes {
		if k != "consumer_reached" {
			injected += n
		}
	}
	for _, c := range r.Coverage.Network {
		injected += c.Injected
	}
	if len(r.Coverage.Faults) > 0 { // every kind per place: the network's included
		injected = 0
		for _, f := range r.Coverage.Faults {
			injected += f.Injected
		}
	}
	if steps != r.Steps || prev.At <= 0 || prev.At > r.Seconds || prev.Faults != injected {
		t.Fatalf("checkpoints: %d steps, %d faults, last at %vs; the run: %d steps, %d faults, %.1fs", steps, prev.Faults, prev.At, r.Steps, injected, r.Seconds)
	}
}

// The loop contract runs from the CLI and writes the same reports.
func TestRunLoop(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "loop")
	if code, out := cli(t, "run", "--loop", "--checks", "3", "--seed", "3", "--report-dir", dir); code != exitOK || !strings.Contains(out, "loop contract, 3 schedules") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	rep, err := reports.Read(dir)
	if err != nil || rep.Verdict != reports.Pass {
		t.Fatalf("report %+v, %v", rep, err)
	}
	for _, p := range rep.Properties {
		// The reference relay reports its claims: fencing is judged.
		if p.Name == "fencing" && (p.Verdict != reports.Held || p.Judged == nil || *p.Judged == 0) {
			t.Errorf("fencing is %s, judged %v, under the loop contract, want held", p.Verdict, p.Judged)
		}
		if p.Name == "lease-exclusive" && p.Verdict != reports.NotApplicable {
			t.Errorf("lease-exclusive is %s under the loop contract, want not-applicable", p.Verdict)
		}
	}
	// A checkpoint per schedule, but three make no plot.
	checkProgress(t, rep)
	if page, _ := os.ReadFile(filepath.Join(dir, "report.html")); strings.Contains(string(page), `<svg id="rate"`) {
		t.Error("a run of 3 schedules has a rate plot")
	}
	if code, _ := cli(t, "run", "--loop", "--subject", "claim-no-reclaim"); code != exitUsage {
		t.Fatalf("a step-contract mutant through --loop: exit %d, want %d", code, exitUsage)
	}
}

// A loop failure keeps its schedule beside the report, replay replays it,
// and report.html renders it in Chromium.
func TestRunLoopFailure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "loop")
	code, out := cli(t, "run", "--loop", "--subject", "delete-dead", "--checks", "40", "--seed", "3", "--shrink-time", "15s", "--report-dir", dir)
	if code != exitViolation || !strings.Contains(out, "property violated: no-loss") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	rep, err := reports.Read(dir)
	if err != nil || rep.Failure == nil || rep.Failure.FailFile != gate.ScheduleFile || rep.Failure.Property != "no-loss" {
		t.Fatalf("report %+v, %v", rep, err)
	}
	// Real time: the schedule may or may not come back; replay says how
	// often, and exits 1 if it did.
	code, out = cli(t, "replay", "--times", "2", dir)
	if !strings.Contains(out, " of 2 times") || (code != exitViolation) != strings.Contains(out, "reproduced 0 of 2") {
		t.Fatalf("replay: exit %d:\n%s", code, out)
	}
	// The same schedule on the reference passes, and replay shows what it
	// did: a story, not just "reproduced 0".
	path := filepath.Join(dir, gate.ScheduleFile)
	f, err := loopcheck.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Subject = "reference"
	if err := loopcheck.WriteFile(path, f); err != nil {
		t.Fatal(err)
	}
	code, out = cli(t, "replay", "--times", "1", dir)
	if code != 0 || !strings.Contains(out, "reproduced 0 of 1") || !strings.Contains(out, "last replay (it passed):\n") || !strings.Contains(out, "Commit") {
		t.Fatalf("replay on the reference: exit %d:\n%s", code, out)
	}
	dom, console := chromium.Render(t, filepath.Join(dir, "report.html"))
	if len(console) > 0 {
		t.Errorf("console messages: %v", console)
	}
	if !strings.Contains(dom, "no-loss") || !strings.Contains(dom, "Commit") {
		t.Errorf("report.html lacks the property or the story:\n%.2000s", dom)
	}
}

// The team's own SQL: a typo in it is exit 2 with file, line and query,
// before any check runs; a run keeps copies of the files it ran, and
// replay uses them after the user's files have moved.
func TestSQLContractErrorsAndCopies(t *testing.T) {
	seed, err := os.ReadFile("../../adapters/sqlfile/testdata/seed_runtime.sql")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(work, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	good := write("good.sql", string(seed))
	missing := write("missing.sql", strings.Replace(string(seed), "FROM outbox_events\n    WHERE (outbox_events.status IN", "FROM outbox_eventz\n    WHERE (outbox_events.status IN", 1))
	badSchema := write("schema.sql", "CREATE TABLE ok (id int);\nCREATE TABLE broken (id int,,);\n")
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--sql-queries", missing}, "missing.sql:4: query ClaimOutboxEvents: relation \"outbox_eventz\" does not exist"},
		{[]string{"--sql-queries", good, "--sql-schema", badSchema}, "schema.sql:2: schema: syntax error"},
	} {
		args := append([]string{"run", "--no-faults", "--checks", "5", "--report-dir", ""}, c.args...)
		code, _, stderr := cliErr(t, args...)
		if code != exitUsage || !strings.Contains(lastLine(stderr), c.says) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, lastLine(stderr), exitUsage, c.says)
		}
	}

	broken, err := os.ReadFile("../../adapters/sqlfile/testdata/broken_ignores_available_at.sql")
	if err != nil {
		t.Fatal(err)
	}
	queries := write("team.sql", string(broken))
	dir := filepath.Join(t.TempDir(), "report")
	if code, _ := cli(t, "run", "--no-faults", "--checks", "100", "--seed", "3", "--shrink-time", "5s", "--sql-queries", queries, "--report-dir", dir); code != exitViolation {
		t.Fatalf("exit %d, want %d", code, exitViolation)
	}
	rep, err := reports.Read(dir)
	if err != nil || rep.SQLQueries != "queries.sql" || len(rep.SQLFrom) != 1 || rep.SQLFrom[0] != queries {
		t.Fatalf("report %+v, %v", rep, err)
	}
	os.Remove(queries) // the user's file is gone; the report's copy is not
	if code, out := cli(t, "replay", dir); code != exitViolation || !strings.Contains(out, "reproduced:") {
		t.Fatalf("replay exit %d:\n%s", code, out)
	}
}
