package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/outboxcheck/outboxcheck/impl/mutants"
)

// Bad input gets one clear line on stderr and a distinct exit code, and
// leaves nothing half-written.
func TestBadInput(t *testing.T) {
	t.Setenv("OUTBOXCHECK_DATABASE_URL", "") // the cases give their own, or none
	readonly := filepath.Join(t.TempDir(), "ro")
	os.Mkdir(readonly, 0o555)
	foreign := t.TempDir()
	os.WriteFile(filepath.Join(foreign, "report.json"), []byte(`{"schema":"other/v1"}`), 0o644)
	corrupt := t.TempDir()
	os.WriteFile(filepath.Join(corrupt, "report.json"), []byte(`{"schema":`), 0o644)
	cases := []struct {
		args []string
		code int
		says string
	}{
		{nil, exitUsage, "no command given"},
		{[]string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{[]string{"run", "--subject", "nope"}, exitUsage, `unknown subject "nope"`},
		{[]string{"run", "--seed", "x1"}, exitUsage, "--seed must be a positive integer"},
		{[]string{"run", "--checks", "0"}, exitUsage, "--checks must be at least 1"},
		{[]string{"run", "--steps", "20000"}, exitUsage, "--steps must be from 1 to 10000"},
		{[]string{"run", "--shard", "3/2", "--seed", "1"}, exitUsage, "--shard must be i/n"},
		{[]string{"run", "--shard", "1/2"}, exitUsage, "--shard needs --seed"},
		{[]string{"run", "--bogus"}, exitUsage, "flag provided but not defined: -bogus"},
		{[]string{"run", "--report-dir", "", "--database-url", "::not a url"}, exitUsage, "malformed database URL"},
		{[]string{"run", "--report-dir", "", "--database-url", "postgres://u:p@127.0.0.1:1/postgres?connect_timeout=2"}, exitInfra, "infrastructure error"},
		{[]string{"mutants", "--only", "nope"}, exitUsage, `unknown mutant "nope"`},
		{[]string{"replay"}, exitUsage, "replay takes one report directory"},
		{[]string{"replay", t.TempDir()}, exitUsage, "not an outboxcheck report"},
		{[]string{"replay", foreign}, exitUsage, `schema "other/v1"`},
		{[]string{"replay", corrupt}, exitUsage, "not an outboxcheck report"},
		{[]string{"report", "merge", "--out", t.TempDir()}, exitUsage, "at least one report directory"},
		{[]string{"bench", "--seeds", "0"}, exitUsage, "must be positive"},
		{[]string{"clean"}, exitUsage, "clean needs --database-url"},
	}
	if os.Geteuid() != 0 { // root writes anywhere
		cases = append(cases, struct {
			args []string
			code int
			says string
		}{[]string{"run", "--report-dir", filepath.Join(readonly, "r")}, exitUsage, "--report-dir"})
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var stdout, stderr strings.Builder
			code := exitCode(run(c.args, &stdout, &stderr), &stderr)
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			last := lines[len(lines)-1]
			if code != c.code || !strings.Contains(last, c.says) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, stderr.String(), c.code, c.says)
			}
			if !strings.HasPrefix(last, "outboxcheck: ") {
				t.Fatalf("the error is not one line of outboxcheck's: %q", last)
			}
		})
	}
}

func TestHelpIsNotAnError(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"run", "-h"}, {"mutants", "-h"}, {"replay", "-h"}} {
		var stdout, stderr strings.Builder
		if code := exitCode(run(args, &stdout, &stderr), &stderr); code != exitOK {
			t.Errorf("%v: exit %d", args, code)
		}
	}
	var stdout, stderr strings.Builder
	run([]string{"--help"}, &stdout, &stderr)
	for _, want := range []string{"exit codes:", "3  infrastructure error", "replay", "report"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

// A command's -h and --help are one request: the same usage, on stdout,
// nothing on stderr, exit 0, as the top-level --help.
func TestHelpOnStdout(t *testing.T) {
	for _, cmd := range [][]string{{"run"}, {"mutants"}, {"replay"}, {"report"}, {"report", "merge"}, {"bench"}, {"clean"}} {
		var usage string
		for _, h := range []string{"-h", "--help"} {
			args := append(append([]string{}, cmd...), h)
			var stdout, stderr strings.Builder
			code := exitCode(run(args, &stdout, &stderr), &stderr)
			if code != exitOK || stderr.Len() > 0 || !strings.HasPrefix(stdout.String(), "usage: outboxcheck "+cmd[0]) {
				t.Errorf("%v: exit %d, stdout %.40q, stderr %q; want exit 0 and the usage on stdout alone", args, code, stdout.String(), stderr.String())
			}
			if usage != "" && stdout.String() != usage {
				t.Errorf("%v: not the usage -h prints", args)
			}
			usage = stdout.String()
		}
	}
}

// mutants -list names every mutant, the property that kills it, and what
// its kill run needs.
func TestMutantsList(t *testing.T) {
	code, out := cli(t, "mutants", "-list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, m := range mutants.All {
		needs := "-"
		if m.NeedsFaults {
			needs = "faults"
		} else if m.NeedsConcurrency {
			needs = "concurrency"
		}
		line := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(m.Name) + ` +` + regexp.QuoteMeta(m.Kills) + ` +` + needs + ` `)
		if !line.MatchString(out) {
			t.Errorf("no line for %s killed by %s, needs %s", m.Name, m.Kills, needs)
		}
	}
	if !strings.Contains(out, "inbox-select-then-insert") || strings.Count(out, " concurrency ") != 2 {
		t.Errorf("want the two concurrency mutants marked:\n%s", out)
	}
}

// A run never writes over a user's files: a non-empty directory that holds
// no outboxcheck report is refused before anything runs, and the files in
// it, a repository's testdata/rapid among them, are left as they were.
func TestReportDirKeepsUsersFiles(t *testing.T) {
	repo := t.TempDir()
	files := map[string]string{
		"report.md":                     "my own notes",
		"go.mod":                        "module example.com/x\n",
		"testdata/rapid/TestX/a.fail":   "# my fail file\n",
		"outboxcheck-report/README.txt": "not a report",
	}
	for name, body := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(repo, name)), 0o755)
		os.WriteFile(filepath.Join(repo, name), []byte(body), 0o644)
	}
	t.Chdir(repo)
	for _, args := range [][]string{
		{"run", "--report-dir", "."},
		{"run"}, // the default, outboxcheck-report, holds a file of the user's
		{"run", "--loop", "--report-dir", repo},
		{"report", "merge", "--out", ".", repo},
	} {
		code, _, stderr := cliErr(t, args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
		if args[0] == "run" && !strings.Contains(lastLine(stderr), "holds no outboxcheck report") {
			t.Errorf("%v: %q", args, lastLine(stderr))
		}
	}
	for name, body := range files {
		if b, err := os.ReadFile(filepath.Join(repo, name)); err != nil || string(b) != body {
			t.Errorf("%s: %q, %v; want it kept as %q", name, b, err, body)
		}
	}
}

// Flags may follow the positional arguments (`replay DIR --times 2`, as
// the README writes it), up to a "--".
func TestFlagsAfterArguments(t *testing.T) {
	for _, c := range []struct {
		args  []string
		times int
		rest  []string
	}{
		{[]string{"dir", "--times", "2"}, 2, []string{"dir"}},
		{[]string{"--times", "3", "dir"}, 3, []string{"dir"}},
		{[]string{"a", "--times=4", "b"}, 4, []string{"a", "b"}},
		{[]string{"a", "--", "--times", "5"}, 1, []string{"a", "--times", "5"}},
	} {
		fs := flag.NewFlagSet("replay", flag.ContinueOnError)
		times := fs.Int("times", 1, "")
		if _, err := parseFlags(fs, c.args); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if *times != c.times || !slices.Equal(fs.Args(), c.rest) {
			t.Errorf("%v: times %d, args %q; want %d, %q", c.args, *times, fs.Args(), c.times, c.rest)
		}
	}
}
