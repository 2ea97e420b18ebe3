package main

import (
	"strings"
	"testing"

	"github.com/outboxcheck/outboxcheck/reports"
)

// replay of a report with no counterexample to run again exits as that
// report deserves, at once and without a server: 0 for a pass, 4 for a
// subject error, and 2, one line, for the rest. Never 130: no signal came.
func TestReplayWithNothingToReplay(t *testing.T) {
	t.Setenv("OUTBOXCHECK_DATABASE_URL", "postgres://u:p@127.0.0.1:1/postgres?connect_timeout=1") // never reached
	violation := func(r *reports.Report) {
		r.Verdict, r.Message = reports.Violation, "property violated: no-loss"
		r.Failure = &reports.Counterexample{Property: "no-loss", Message: "lost"}
	}
	for _, c := range []struct {
		name string
		edit func(*reports.Report)
		code int
		says string
	}{
		{"a pass", nil, exitOK, ""},
		{"an interrupted run", func(r *reports.Report) { r.Verdict, r.Interrupted = reports.Interrupted, true }, exitUsage, "the run was interrupted before it found anything"},
		{"an infrastructure error", func(r *reports.Report) { r.Verdict = reports.Infrastructure }, exitUsage, "no recorded counterexample to replay (verdict infrastructure)"},
		{"a merge", func(r *reports.Report) { violation(r); r.Shard, r.Merged = "", []string{"1/2", "2/2"} }, exitUsage, "replay the report of the shard"},
		{"a violation without a fail file", violation, exitUsage, "no recorded counterexample"},
		{"a subject error without a fail file", func(r *reports.Report) { r.Verdict = reports.SubjectError }, exitSubject, "no recorded counterexample"},
	} {
		code, stdout, stderr := cliErr(t, "replay", fakeReport(t, "", c.edit))
		if code != c.code || !strings.Contains(stderr, c.says) || (c.code == exitOK) != strings.Contains(stdout, "the run passed") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d and %q", c.name, code, stdout, stderr, c.code, c.says)
		}
	}
}
