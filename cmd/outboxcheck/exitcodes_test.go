package main

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/reports"
)

// exitCase is one command line and the exit it must come to: its code,
// and what its last line says (stdout's for exit 0, else stderr's).
type exitCase struct {
	name   string
	code   int
	args   []string
	says   string
	signal syscall.Signal // sent at the end of the first check, if not 0
}

// docs/exit-codes.md's table is this test: every row of it is exercised
// here at least once, and every code here is a row there. Each command
// runs in this process, as main runs it.
func TestExitCodes(t *testing.T) {
	t.Setenv("OUTBOXCHECK_DATABASE_URL", "") // the cases give their own, or none
	cases := exitCases(t)
	readme := readmeExitCodes(t)
	for _, code := range readme {
		if !slices.ContainsFunc(cases, func(c exitCase) bool { return c.code == code }) {
			t.Errorf("docs/exit-codes.md's exit code %d has no case here", code)
		}
	}
	for _, c := range cases {
		if !slices.Contains(readme, c.code) {
			t.Errorf("%s: exit %d is no row of docs/exit-codes.md's table", c.name, c.code)
		}
		t.Run(c.name, func(t *testing.T) { c.check(t) })
	}
}

func (c exitCase) check(t *testing.T) {
	if c.signal != 0 {
		signalAt(t, c.signal, func(*harness.History) bool { return true })
	}
	code, stdout, stderr := cliErr(t, c.args...)
	last := lastLine(stderr)
	if c.code == exitOK {
		last = lastLine(stdout)
	} else if !strings.HasPrefix(last, "outboxcheck: ") {
		t.Errorf("the error is not one line of outboxcheck's: %q", last)
	}
	if code != c.code || !strings.Contains(last, c.says) {
		t.Errorf("exit %d, last line %q; want exit %d and %q", code, last, c.code, c.says)
	}
	if strings.Contains(stderr, "s3cret") || strings.Contains(stderr, "tls error") {
		t.Errorf("stderr shows the URL's password or pgx's TLS attempt: %q", stderr)
	}
}

// exitCases are the table: a row per way to each exit code that matters.
func exitCases(t *testing.T) []exitCase {
	server := passwordServer(t)
	runArgs := func(args ...string) []string {
		return append([]string{"run", "--no-faults", "--report-dir", ""}, args...)
	}
	withURL := func(u string) []string { return runArgs("--database-url", u) }
	return []exitCase{
		{name: "every property held", code: exitOK, args: runArgs("--checks", "2"), says: "every property held"},
		{name: "a property violated", code: exitViolation, says: "property violated: no-loss",
			args: runArgs("--subject", "mark-published-before-publishing", "--checks", "20", "--seed", "1", "--shrink-time", "0")},
		{name: "a bad flag", code: exitUsage, args: []string{"run", "--bogus"}, says: "flag provided but not defined: -bogus"},
		{name: "--parallel without --loop", code: exitUsage, args: []string{"run", "--parallel", "2"}, says: "--parallel is for --loop"},
		{name: "--parallel out of range", code: exitUsage, args: []string{"run", "--loop", "--parallel", "0"}, says: "--parallel takes 1 to 64"},
		{name: "--dedupe-window under JetStream's least", code: exitUsage, args: []string{"run", "--loop", "--jetstream", "--dedupe-window", "1ms"}, says: "--dedupe-window must be at least 100ms"},
		{name: "--crash-db without --loop", code: exitUsage, args: []string{"run", "--crash-db"}, says: "--crash-db is for --loop"},
		{name: "--crash-db with schedules at once", code: exitUsage, args: []string{"run", "--loop", "--crash-db", "--parallel", "2"}, says: "--crash-db runs one schedule at a time"},
		{name: "--crash-db on a server the harness does not own", code: exitUsage,
			args: []string{"run", "--loop", "--crash-db", "--report-dir", "", "--database-url", login(t, server, "", "", "postgres")},
			says: "--crash-db crashes only a server the harness starts itself"},
		{name: "--no-faults with --loop", code: exitUsage, args: []string{"run", "--loop", "--no-faults"}, says: "--no-faults is for the step contract"},
		{name: "a dedupe subject with --jetstream=false", code: exitUsage, args: []string{"run", "--loop", "--subject", "dedupe", "--jetstream=false"}, says: "it runs with --jetstream"},
		{name: "--jetstream without --loop", code: exitUsage, args: []string{"run", "--jetstream"}, says: "--jetstream is for --loop"},
		{name: "a time budget that ran nothing", code: exitUsage, args: []string{"run", "--report-dir", "", "--loop", "--time", "1ms", "--parallel", "1"}, says: "nothing was judged"},
		{name: "a bad --pg-setting", code: exitUsage, args: runArgs("--pg-setting", "wal_level"), says: `want name=value, e.g. wal_level=logical; got "wal_level"`},
		{name: "a URL server without a setting the subject needs", code: exitUsage,
			args: []string{"run", "--loop", "--subject", "cdc", "--report-dir", "", "--database-url", login(t, server, "", "", "postgres")},
			says: `must run with wal_level=logical (it runs with "replica")`},
		{name: "a malformed URL", code: exitUsage, args: withURL("::not a url"), says: "malformed database URL"},
		{name: "a keyword=value string", code: exitUsage, args: withURL("host=127.0.0.1 dbname=postgres"), says: "not a URL"},
		{name: "a wrong password", code: exitUsage, args: withURL(login(t, server, "postgres", "s3cret", "postgres")),
			says: `outboxcheck: password authentication failed for user "postgres" (SQLSTATE 28P01)`},
		{name: "a missing database", code: exitUsage, args: withURL(login(t, server, "", "", "no_such_db")),
			says: `outboxcheck: database "no_such_db" does not exist (SQLSTATE 3D000)`},
		{name: "no CREATEDB", code: exitUsage, args: withURL(login(t, server, "nocreate", "s3cret", "postgres")),
			says: "outboxcheck: permission denied to create database (SQLSTATE 42501)"},
		{name: "replay of an interrupted run", code: exitUsage, args: []string{"replay", interruptedReport(t)},
			says: "the run was interrupted before it found anything"},
		{name: "an unreachable server", code: exitInfra, args: withURL("postgres://u:s3cret@127.0.0.1:1/postgres?connect_timeout=2"),
			says: "infrastructure error"},
		{name: "a subject error", code: exitSubject, args: runArgs("--checks", "20", "--seed", "3", "--sql-queries", divByZero(t)),
			says: "subject error: Claim never succeeded"},
		{name: "SIGINT", code: 130, args: runArgs("--checks", "100000"), says: "outboxcheck: interrupted", signal: syscall.SIGINT},
		{name: "SIGTERM", code: 143, args: runArgs("--checks", "100000"), says: "outboxcheck: interrupted", signal: syscall.SIGTERM},
	}
}

// readmeExitCodes are the codes of the exit-code table in
// docs/exit-codes.md, in order.
func readmeExitCodes(t *testing.T) []int {
	b, err := os.ReadFile("../../docs/exit-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	var codes []int
	for _, m := range regexp.MustCompile("(?m)^\\| `(\\d+)` \\|").FindAllStringSubmatch(string(b), -1) {
		n, _ := strconv.Atoi(m[1])
		codes = append(codes, n)
	}
	if len(codes) == 0 {
		t.Fatal("docs/exit-codes.md has no exit-code table (rows like | `0` | meaning | example |)")
	}
	return codes
}

// passwordServer is a harness-owned cluster (password auth on TCP) with a
// role that may log in but not create databases.
func passwordServer(t *testing.T) string {
	ctx := context.Background()
	c, err := pgscratch.Start(ctx, pgscratch.Options{NoDocker: true, OwnSignals: true}) // the SIGINT case must not close it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	conn, err := pgx.Connect(ctx, c.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE ROLE nocreate LOGIN PASSWORD 's3cret'"); err != nil {
		t.Fatal(err)
	}
	return c.URL()
}

// login is base with user and password (if user is not ""), database db,
// and no sslmode, so pgx tries TLS first, as with most users' URLs.
func login(t *testing.T, base, user, password, db string) string {
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		u.User = url.UserPassword(user, password)
	}
	u.Path, u.RawQuery = "/"+db, ""
	return u.String()
}

// interruptedReport is the report of a run a signal stopped before it
// found anything.
func interruptedReport(t *testing.T) string {
	dir := t.TempDir()
	r := &reports.Report{Schema: reports.Schema, Contract: reports.StepContract, Subject: "reference", Verdict: reports.Interrupted, Interrupted: true}
	if err := reports.Write(dir, r); err != nil {
		t.Fatal(err)
	}
	return dir
}

// divByZero is the seed's queries with a claim that divides by zero on
// every call: a subject error.
func divByZero(t *testing.T) string {
	seed, err := os.ReadFile("../../adapters/sqlfile/testdata/seed_runtime.sql")
	if err != nil {
		t.Fatal(err)
	}
	q := strings.Replace(string(seed), "LIMIT sqlc.arg(batch_limit)",
		"LIMIT sqlc.arg(batch_limit)::int / (sqlc.arg(batch_limit)::int - sqlc.arg(batch_limit)::int)", 1)
	p := filepath.Join(t.TempDir(), "claim.sql")
	if err := os.WriteFile(p, []byte(q), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
