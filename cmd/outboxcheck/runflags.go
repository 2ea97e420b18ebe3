package main

import (
	"crypto/rand"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/outboxcheck/outboxcheck/adapters/sqlfile"
	"github.com/outboxcheck/outboxcheck/brokers/jetstream"
	"github.com/outboxcheck/outboxcheck/gate"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/impl/mutants"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// defaultChecks makes the default gate about 12,000 steps, every fault
// kind struck, in under 45 s with PostgreSQL's start on a 2-core machine
// (a faulted check costs ~0.1 s; BENCHMARKS.md has the figure).
const defaultChecks = 240

// shardStride separates the seed ranges of shards: rapid seeds check k of
// a run at base+k(k+1)/2, below 2^32 for up to 90 000 checks.
const shardStride = 1 << 32

// testHookCheck, if set (by tests only), sees every check as it ends.
var testHookCheck func(*harness.History)

func parseRun(args []string, stdout, stderr io.Writer) (*gate.RunConfig, bool, error) {
	fs := newFlags("run", "Checks the reference implementation (or a mutant) against the model with rapid.", stdout)
	var b budgetFlags
	b.register(fs, defaultChecks)
	fs.Lookup("checks").Usage += "; for --loop, schedules, and 10 when not set"
	subject := fs.String("subject", "reference", "what to check: reference, or a mutant's name (see 'outboxcheck mutants -list')")
	noFaults := fs.Bool("no-faults", false, "turn off partitions, lost replies, lost acks, crashes inside a mark and database crashes (refused publishes and kills between calls are ordinary actions: they stay)")
	url := fs.String("database-url", "", "PostgreSQL server URL (default: $OUTBOXCHECK_DATABASE_URL, else Docker, else local binaries)")
	concurrent := fs.Bool("concurrent", false, "add steps where two dispatchers claim, or two consumers handle one message, at the same instant (the database picks their order, so a seed replays up to that choice); on for mutants that need it")
	reportDir := fs.String("report-dir", "outboxcheck-report", "write report.json, report.md and report.html (and rapid's fail file, for replay) here; empty: no report")
	junit := fs.String("junit", "", "write JUnit XML (one test case per property) to this file")
	shard := fs.String("shard", "", "i/n: run shard i (from 1) of n; each shard runs checks/n checks from its own seed range (needs --seed)")
	timeLimit := fs.Duration("time", 0, "a time budget: no check starts after it (with --checks unset, checks are unbounded)")
	verbose := fs.Bool("v", false, "print rapid's output as it comes")
	sqlQueries := fs.String("sql-queries", "", "test your own SQL: a file of sqlc-style named queries (ClaimOutboxEvents, GetNextOutboxAttemptAt, MarkOutboxEventPublished, MarkOutboxEventFailed) run in place of the reference's")
	loop := fs.Bool("loop", false, "check through the loop contract (black-box relay loops on real time, end-state checks); --subject reference, slow-rescan, graceful (stopped through its own Stop), cdc (the CDC relay), dedupe (leaning on JetStream's dedupe window: --jetstream is then on) or a loop mutant (outboxcheck mutants -list)")
	sqlSchema := fs.String("sql-schema", "", "with --sql-queries: DDL run before the reference schema (your outbox_events table and indexes)")
	process := fs.String("process", "", "a subject in any language, through the process contract (docs/process-subjects.md): its command and arguments, split on spaces, run directly (no shell); each process gets its role as a last argument; implies --loop")
	recovery := fs.Duration("recovery", 0, "with --process: the subject's declared recovery, the longest it may go without progress once everything is healed before what is pending is late (default 10s: its relays start as processes again after kills and at the drain, slowly on a loaded machine)")
	parallel := fs.Int("parallel", 0, "with --loop: schedules run at once (1 to 64), each on its own database, links, broker and subject (default: 2 per core, at most 4: the CLI's relays read no server-wide snapshot); 1 runs them one by one")
	js := fs.Bool("jetstream", false, "with --loop: publish to a real broker, an embedded NATS JetStream behind its own fault link (broker-link steps partition it), instead of the harness's in-memory one")
	dedupe := fs.Duration("dedupe-window", 0, "with --jetstream: the stream's Nats-Msg-Id duplicate window (default 2s, and 5s for the dedupe subjects; at least 100ms)")
	crashDB := fs.Bool("crash-db", false, "with --loop: crash-db steps SIGKILL the server and restart it (crash recovery) under the subject; it must be a server the harness started (not --database-url, OUTBOXCHECK_DATABASE_URL or Docker), and schedules run one at a time, a crash reaching every database on it")
	var settings settingFlags
	fs.Var(&settings, "pg-setting", "a server setting the run needs, name=value (repeatable), e.g. wal_level=logical for your own WAL-reading relay: the harness's own server starts with it; one given by URL must already run with it (the CLI's cdc subjects ask for theirs)")
	if help, err := parse(fs, args); help || err != nil {
		return nil, help, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *timeLimit < 0 {
		return nil, false, usageErrorf("--time must not be negative, got %v", *timeLimit)
	}
	if *timeLimit > 0 && !set["checks"] {
		b.checks = gate.UnboundedChecks
	}
	budget, err := b.budget()
	if err != nil {
		return nil, false, err
	}
	if set["parallel"] && (*parallel < 1 || *parallel > 64) {
		return nil, false, usageErrorf("--parallel takes 1 to 64 schedules at once, got %d", *parallel)
	}
	switch {
	case set["recovery"] && *process == "":
		return nil, false, usageErrorf("--recovery is for --process: the CLI's own loop subjects declare theirs")
	case set["recovery"] && *recovery <= 0:
		return nil, false, usageErrorf("--recovery must be positive, got %v", *recovery)
	}
	switch {
	case set["jetstream"] && !*js && gate.LeansOnDedupe(*subject):
		return nil, false, usageErrorf("--subject %s leans on a real broker's deduplication: it runs with --jetstream", *subject)
	case set["dedupe-window"] && !*js && !gate.LeansOnDedupe(*subject):
		return nil, false, usageErrorf("--dedupe-window is for --jetstream (or a subject that turns it on: dedupe, dedupe-past-window)")
	case set["dedupe-window"] && *dedupe < jetstream.MinDedupeWindow:
		return nil, false, usageErrorf("--dedupe-window must be at least %v (JetStream's least), got %v", jetstream.MinDedupeWindow, *dedupe)
	case *js && !*loop && *process == "":
		return nil, false, usageErrorf("--jetstream is for --loop: the step contract's broker is the model's")
	}
	switch {
	case *crashDB && !*loop && *process == "":
		return nil, false, usageErrorf("--crash-db is for --loop: the step contract crashes a server it owns already")
	case *crashDB && set["parallel"] && *parallel != 1:
		return nil, false, usageErrorf("--crash-db runs one schedule at a time (a crash reaches every database on the server), not --parallel %d", *parallel)
	case *crashDB && (*url != "" || os.Getenv(pgscratch.EnvDatabaseURL) != ""):
		return nil, false, usageErrorf("--crash-db crashes only a server the harness starts itself, not one given by --database-url or %s", pgscratch.EnvDatabaseURL)
	case *noFaults && (*loop || *process != ""):
		return nil, false, usageErrorf("--no-faults is for the step contract: the loop contract's schedules are its faults")
	}
	if set["parallel"] && !*loop && *process == "" {
		return nil, false, usageErrorf("--parallel is for --loop: the step contract runs one check at a time (use --shard for more)")
	}
	c := &gate.RunConfig{Subject: *subject, Budget: budget, Faults: !*noFaults, URL: *url, TimeLimit: *timeLimit,
		Verbose: *verbose, Args: args, Shard: *shard, Parallel: *parallel, OnCheck: testHookCheck, Settings: settings,
		JetStream: *js, DedupeWindow: *dedupe, CrashDB: *crashDB}
	var needs bool
	if *process != "" {
		if set["subject"] {
			return nil, false, usageErrorf("--subject and --process exclude each other")
		}
		if c.Process = strings.Fields(*process); len(c.Process) == 0 {
			return nil, false, usageErrorf("--process needs a command")
		}
		if _, err := exec.LookPath(c.Process[0]); err != nil {
			return nil, false, usageErrorf("--process: %v", err)
		}
		if c.ProcessDir, err = os.Getwd(); err != nil {
			return nil, false, usageErrorf("--process: %v", err)
		}
		c.Subject = "process: " + *process
		c.Recovery = *recovery
		*loop = true
	}
	switch {
	case *loop:
		if *sqlQueries != "" || *shard != "" {
			return nil, false, usageErrorf("--loop runs alone: not with --sql-queries or --shard")
		}
		if c.Process == nil && !gate.IsLoopSubject(*subject) {
			return nil, false, usageErrorf("--loop runs %s, not %q", gate.LoopNames(), *subject)
		}
		c.Loop = true
		if !set["checks"] && *timeLimit == 0 {
			c.Budget.Checks = 10
		}
	case *sqlQueries != "":
		if set["subject"] {
			return nil, false, usageErrorf("--subject and --sql-queries exclude each other")
		}
		if c.SQLQueries, c.SQLSchema, err = absPaths(*sqlQueries, *sqlSchema); err != nil {
			return nil, false, err
		}
		c.Subject = "sql:" + filepath.Base(c.SQLQueries)
		if c.NewSubject, err = sqlfile.New(c.SQLQueries, c.SQLSchema); err != nil {
			return nil, false, usageErrorf("%v", err)
		}
	case *sqlSchema != "":
		return nil, false, usageErrorf("--sql-schema needs --sql-queries")
	default:
		if c.NewSubject, needs, err = gate.SubjectByName(*subject); err != nil {
			return nil, false, err
		}
		if m, ok := mutants.ByName(*subject); ok && m.NeedsFaults && *noFaults {
			fmt.Fprintf(stderr, "outboxcheck: warning: only faults expose mutant %s, and --no-faults turns them off: expect a pass\n", m.Name)
		}
	}
	c.Concurrent = *concurrent || needs
	if *shard != "" {
		i, n, err := parseShard(*shard)
		if err != nil {
			return nil, false, err
		}
		if budget.Seed == 0 {
			return nil, false, usageErrorf("--shard needs --seed: every shard must start from the same seed")
		}
		c.Budget.Seed += uint64(i-1) * shardStride
		c.Budget.Checks = (budget.Checks + n - 1) / n
	}
	if c.Budget.Seed == 0 {
		var b [8]byte
		rand.Read(b[:])
		c.Budget.Seed = binary.LittleEndian.Uint64(b[:])>>1 | 1 // drawn here so the report can name it
	}
	if *reportDir != "" {
		if c.ReportDir, c.MadeReportDir, err = gate.MakeReportDir(*reportDir); err != nil {
			return nil, false, err
		}
	}
	if *junit != "" {
		if c.JUnit, err = filepath.Abs(*junit); err != nil {
			return nil, false, usageErrorf("--junit: %v", err)
		}
		if err := gate.CheckWritable(filepath.Dir(c.JUnit)); err != nil {
			return nil, false, err
		}
	}
	return c, false, nil
}

// absPaths resolves the SQL contract's files, which must be readable.
func absPaths(queries, schema string) (string, string, error) {
	var out [2]string
	for i, p := range []string{queries, schema} {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err == nil {
			_, err = os.Stat(abs)
		}
		if err != nil {
			return "", "", usageErrorf("%v", err)
		}
		out[i] = abs
	}
	return out[0], out[1], nil
}

// parseShard parses "i/n" with 1 ≤ i ≤ n.
func parseShard(s string) (i, n int, err error) {
	if _, err := fmt.Sscanf(s, "%d/%d", &i, &n); err != nil || fmt.Sprintf("%d/%d", i, n) != s || n < 1 || i < 1 || i > n {
		return 0, 0, usageErrorf("--shard must be i/n with 1 ≤ i ≤ n, got %q", s)
	}
	return i, n, nil
}
