package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outboxcheck/outboxcheck/internal/chromium"
	"github.com/outboxcheck/outboxcheck/reports"
)

// The team's SQL passes the preflight but fails at run time on every call
// of one operation: a query that divides by zero, or a constraint of the
// team's schema that the reference's insert never meets. The run is the
// subject's failure, exit 4, naming the operation and its first error
// (for a team query, with file, line and query as the preflight names
// them): not infrastructure (exit 3) and not a pass (exit 0). Its report
// says so, and replay reproduces it where a check failed on it (a run
// that would have passed has nothing to replay).
func TestSQLSubjectError(t *testing.T) {
	seed, err := os.ReadFile("../../adapters/sqlfile/testdata/seed_runtime.sql")
	if err != nil {
		t.Fatal(err)
	}
	schema, err := os.ReadFile("../../impl/schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(work, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	div0 := write("claim.sql", strings.Replace(string(seed), "LIMIT sqlc.arg(batch_limit)",
		"LIMIT sqlc.arg(batch_limit)::int / (sqlc.arg(batch_limit)::int - sqlc.arg(batch_limit)::int)", 1))
	good := write("good.sql", string(seed))
	table := string(schema)[strings.Index(string(schema), "CREATE TABLE IF NOT EXISTS outbox_events"):]
	table = table[:strings.Index(table, ");")]
	tenant := write("tenant.sql", table+",\n    tenant_id text NOT NULL\n);\n")

	for _, c := range []struct {
		name   string
		args   []string
		op     string
		says   string
		replay string
	}{
		{"a query that raises", []string{"--sql-queries", div0}, "Claim", "claim.sql:2: query ClaimOutboxEvents: division by zero", "reproduced: subject error: Claim"},
		{"a constraint of the schema", []string{"--sql-queries", good, "--sql-schema", tenant}, "Commit", `null value in column "tenant_id"`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "report")
			args := append([]string{"run", "--no-faults", "--checks", "20", "--seed", "3", "--report-dir", dir}, c.args...)
			code, _, stderr := cliErr(t, args...)
			line := lastLine(stderr)
			if code != exitSubject || !strings.Contains(line, "subject error: "+c.op+" never succeeded") || !strings.Contains(line, c.says) {
				t.Fatalf("exit %d, %q; want %d, the operation %s and %q", code, line, exitSubject, c.op, c.says)
			}
			rep, err := reports.Read(dir)
			if err != nil || rep.Verdict != reports.SubjectError || rep.Failure == nil || rep.Failure.Operation != c.op {
				t.Fatalf("report %+v, %v", rep, err)
			}
			for _, p := range rep.Properties {
				if p.Verdict != reports.NotChecked {
					t.Errorf("property %s is %s, want not-checked", p.Name, p.Verdict)
				}
			}
			dom, console := chromium.Render(t, filepath.Join(dir, "report.html"))
			if len(console) > 0 || !strings.Contains(dom, `class="subject-error"`) || !strings.Contains(dom, "Where "+c.op+" first failed") {
				t.Errorf("report.html: console %v, or no subject error:\n%.1500s", console, dom)
			}
			if code, out, stderr := cliErr(t, "replay", dir); code != exitSubject || (c.replay == "") != strings.Contains(stderr, "no recorded counterexample") ||
				!strings.Contains(out, c.replay) {
				t.Errorf("replay: exit %d:\n%s%s", code, out, stderr)
			}
		})
	}
}
