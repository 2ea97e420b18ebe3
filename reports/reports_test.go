package reports

import (
	"bytes"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sample is a failed run with a fault window, a crash and a failing step.
func sample() *Report {
	return &Report{Schema: Schema, Subject: "mark-published-no-fence", Args: []string{"--seed", "7"}, Seed: 7,
		Faults: true, Started: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC), Seconds: 3.5, Checks: 12, ShrinkRuns: 40, Steps: 300,
		Verdict: Violation, Message: "property violated: fencing: mark with stale claim_id k1 changed the row",
		Environment: Environment{Tool: "abc123", Go: "go1.26", OS: "linux/amd64", Postgres: "15.18", PostgresSource: "local"},
		Properties: []Property{{Name: "fencing", Kind: "safety", Verdict: Violated, Detail: "stale <mark>"},
			{Name: "no-loss", Kind: "liveness", Verdict: Held}},
		Coverage: Coverage{Network: map[string]KindCoverage{"blackhole": {Injected: 3, Struck: 1, Affected: 2}, "reset": {Injected: 2}},
			Crashes: map[string]int{"dispatcher": 1}, NotApplicable: map[string]string{"CrashDatabase": "not owned"}},
		Failure: &Counterexample{Property: "fencing", Message: "mark with stale claim_id k1 changed the row", FirstCheck: 12,
			FailFile: "testdata/rapid/x/x.fail", Steps: []Step{
				{N: 1, Clock: "00:00:00.000000", Action: "Commit", Actor: "producer", Input: "pay-1", Result: "event e1"},
				{N: 2, Clock: "00:00:00.000000", Action: "Partition", Actor: "dispatcher-0", Input: "blackhole after 2 requests"},
				{N: 3, Clock: "00:00:00.000000", Action: "Claim", Actor: "dispatcher-0", Input: "limit 1", Result: "claimed [e1]"},
				{N: 4, Clock: "00:00:00.000000", Action: "CrashDispatcher", Actor: "dispatcher-1", Input: "forgets 0 claims"},
				{N: 5, Clock: "00:00:00.000000", Action: "Heal", Actor: "dispatcher-0"},
				{N: 6, Clock: "00:01:00.001000", Action: "MarkPublished", Actor: "dispatcher-0", Input: "e1 (claim k1) <&>",
					Result: "changed=true", Expect: "[fencing] mark with stale claim_id k1 changed the row"},
			}}}
}

func TestWriteReadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, sample()); err != nil {
		t.Fatal(err)
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Verdict != Violation || got.Failure == nil || len(got.Failure.Steps) != 6 || got.ExitCode() != 1 {
		t.Fatalf("round trip lost data: %+v", got)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".outboxcheck-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"VIOLATION", "**VIOLATED**", "| 6 | 00:01:00.001000 | MarkPublished", "reset **(never struck)**", "`CrashDatabase`: not owned"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
}

func TestReadRefusesForeignDirectories(t *testing.T) {
	dir := t.TempDir()
	if _, err := Read(dir); !errors.Is(err, ErrNotAReport) {
		t.Fatalf("empty dir: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "report.json"), []byte(`{"schema":"something/v9"}`), 0o644)
	if _, err := Read(dir); !errors.Is(err, ErrNotAReport) || !strings.Contains(err.Error(), "something/v9") {
		t.Fatalf("foreign schema: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "report.json"), []byte(`{"schema":`), 0o644)
	if _, err := Read(dir); !errors.Is(err, ErrNotAReport) {
		t.Fatalf("corrupt json: %v", err)
	}
}

func TestJUnitHasOneCasePerProperty(t *testing.T) {
	var b bytes.Buffer
	if err := sample().JUnit(&b); err != nil {
		t.Fatal(err)
	}
	var got junitSuites
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b.String())
	}
	s := got.Suites[0]
	if s.Tests != 2 || s.Failures != 1 || len(s.Cases) != 2 || s.Cases[0].Failure == nil || s.Cases[1].Failure != nil {
		t.Fatalf("suite %+v", s)
	}
}

func TestMergeTakesTheWorstVerdictAndAddsUp(t *testing.T) {
	a := sample()
	a.Shard = "2/2"
	b := sample()
	b.Shard, b.Verdict, b.Message, b.Failure = "1/2", Pass, "", nil
	b.Properties = []Property{{Name: "fencing", Kind: "safety", Verdict: Held}, {Name: "no-loss", Kind: "liveness", Verdict: Held}}
	m, err := Merge([]*Report{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if m.Verdict != Violation || m.Checks != 24 || m.Coverage.Network["blackhole"].Injected != 6 ||
		m.Properties[0].Verdict != Violated || strings.Join(m.Merged, ",") != "1/2,2/2" || m.Failure == nil {
		t.Fatalf("merged: %+v", m)
	}
	if _, err := Merge([]*Report{a, a}); err == nil {
		t.Fatal("merged one shard twice")
	}
}
