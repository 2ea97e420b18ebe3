package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outboxcheck/outboxcheck/reports"
)

// fakeReport writes a passing step-contract report of shard (or of no
// shard: "") into a new directory, edited by edit, and returns it.
func fakeReport(t *testing.T, shard string, edit func(*reports.Report)) string {
	t.Helper()
	r := &reports.Report{Schema: reports.Schema, Contract: reports.StepContract, Subject: "reference", Shard: shard, Checks: 5, Verdict: reports.Pass}
	if edit != nil {
		edit(r)
	}
	dir := t.TempDir()
	if err := reports.Write(dir, r); err != nil {
		t.Fatal(err)
	}
	return dir
}

// report merge refuses, in one line with exit 2 and writing nothing, an
// output that is one of its inputs, inputs that are not every shard of one
// run, and shards without a verdict (never 130: no signal came); every
// shard of one run it merges.
func TestMergeRefuses(t *testing.T) {
	s1, s2 := fakeReport(t, "1/2", nil), fakeReport(t, "2/2", nil)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(s1, link); err != nil {
		t.Fatal(err)
	}
	of3 := fakeReport(t, "1/3", nil)
	loop := fakeReport(t, "2/2", func(r *reports.Report) { r.Contract = reports.LoopContract })
	mutant := fakeReport(t, "2/2", func(r *reports.Report) { r.Subject = "claim-no-reclaim" })
	stopped := fakeReport(t, "2/2", func(r *reports.Report) { r.Verdict, r.Interrupted = reports.Interrupted, true })
	before, _ := os.ReadFile(filepath.Join(s1, "report.json"))
	for _, c := range []struct {
		name, out string
		in        []string
		says      string
	}{
		{"out is an input", s1, []string{s1, s2}, "is the report " + s1 + ", one of those to merge"},
		{"out is an input by another path", link, []string{s1, s2}, "one of those to merge"},
		{"out is an input by a relative path", s2 + "/../" + filepath.Base(s2), []string{s1, s2}, "one of those to merge"},
		{"a missing shard", "", []string{s1}, "shard 2/2 missing"},
		{"a shard twice", "", []string{s1, s2, s2}, "shard 2/2 given twice"},
		{"shards of another split", "", []string{s1, of3}, "split differently"},
		{"not a shard", "", []string{s1, s2, fakeReport(t, "", nil)}, "is not a shard"},
		{"different contracts", "", []string{s1, loop}, "different contracts: step and loop"},
		{"different subjects", "", []string{s1, mutant}, "different subjects: reference and claim-no-reclaim"},
		{"no verdict", "", []string{s1, stopped}, "shard 2/2 was interrupted before it found anything"},
	} {
		out := c.out
		if out == "" {
			out = filepath.Join(t.TempDir(), "merged")
		}
		code, _, stderr := cliErr(t, append([]string{"report", "merge", "--out", out}, c.in...)...)
		if code != exitUsage || !strings.Contains(lastLine(stderr), c.says) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and one line with %q", c.name, code, stderr, exitUsage, c.says)
		}
		if c.out == "" {
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s: --out was made: %v", c.name, err)
			}
		}
	}
	if after, _ := os.ReadFile(filepath.Join(s1, "report.json")); string(after) != string(before) {
		t.Error("a refused merge rewrote its input")
	}
	merged := filepath.Join(t.TempDir(), "merged")
	if code, _, _ := cliErr(t, "report", "merge", "--out", merged, s2, s1); code != exitOK {
		t.Fatalf("every shard: exit %d", code)
	}
	if m, err := reports.Read(merged); err != nil || m.Checks != 10 || m.Contract != reports.StepContract {
		t.Fatalf("merged %+v, %v", m, err)
	}
}
