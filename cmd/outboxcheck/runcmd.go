package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/reports"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// runConfig is a parsed `run` command line.
type runConfig struct {
	subject    string
	newSubject stepcheck.NewSubject
	budget     harness.Budget
	faults     bool
	concurrent bool
	url        string
	reportDir  string // absolute; "" for none
	junit      string // absolute; "" for none
	shard      string
	timeLimit  time.Duration
	verbose    bool
	args       []string
	sqlQueries string // absolute; the SQL contract's files, or ""
	sqlSchema  string
	loop       bool // the loop contract instead of the step contract
	parallel   int  // --loop: schedules at once; 0 the default
}

func runCmd(args []string, stdout, stderr io.Writer) error {
	c, help, err := parseRun(args, stdout, stderr)
	if help || err != nil {
		return err
	}
	ses, err := openSession(c.url, stderr, true)
	if err != nil {
		return err
	}
	defer ses.close()
	ses.sweep(stderr)
	if c.sqlQueries != "" {
		if err := preflight(ses, c.sqlQueries, c.sqlSchema); err != nil {
			return err
		}
	}
	// Only now, with a report sure to follow, the earlier one's files go.
	if err := clearCounterexamples(c.reportDir); err != nil {
		return err
	}
	if c.loop {
		fmt.Fprintf(stdout, "outboxcheck: %s through the loop contract on PostgreSQL %s (%s), %s, seed %d\n",
			c.subject, ses.cluster.Version, ses.cluster.Source, strings.ReplaceAll(c.budgetText(), "checks", "schedules"), c.budget.Seed)
		return runLoop(c, ses, c.newReport(ses), stdout, stderr)
	}
	opts, drop, err := ses.options(c.faults, c.concurrent)
	if err != nil {
		return err
	}
	defer drop()
	cluster := ses.cluster
	if c.timeLimit > 0 {
		opts.Deadline = time.Now().Add(c.timeLimit)
	}
	fmt.Fprintf(stdout, "outboxcheck: %s on PostgreSQL %s (%s), %s, seed %d%s, faults %v\n",
		c.subject, cluster.Version, cluster.Source, c.budgetText(), c.budget.Seed, shardText(c.shard), c.faults)

	prog := newProgress(stderr, c.budget.Checks, opts.Deadline)
	opts.OnCheck = prog.check
	var live io.Writer
	if c.verbose {
		live = stderr
	}
	rep := c.newReport(ses)

	budget := c.budget
	budget.KeepFailFiles = c.reportDir != ""
	opts.Interrupt = ses.intr.C
	var sum harness.Summary
	rec := harness.NewRecorder("outboxcheck/"+c.subject, live)
	failFile, err := harness.FailFileIn(c.reportDir, failFileName, func() {
		restore := budget.Apply()
		defer restore()
		prog.start()
		sum = stepcheck.Run(rec, c.newSubject, opts)
		prog.stop()
	})
	if err != nil {
		return usageErrorf("report directory: %v", err)
	}
	rep.Seconds = time.Since(rep.Started).Seconds()
	rep.Fill(sum)
	rep.Steps = sum.Steps
	rep.SetRate(sum)
	if rec.Failed() && sum.Failure == nil {
		rep.Verdict, rep.Message = reports.Infrastructure, "rapid failed without a recorded failure: "+rec.Output()
	}
	if rep.Failure != nil {
		rep.Failure.FailFile = failFile
	}
	fmt.Fprintf(stdout, "outboxcheck: %v; %s\n", sum, rate(rep))
	if sum.Time != nil && sum.Time.Total > 0 {
		fmt.Fprintf(stdout, "outboxcheck: wall time: %v\n", sum.Time)
	}
	if err := c.write(rep); err != nil {
		return err
	}
	c.saidWhere(stdout)
	return verdict(rep, ses, stdout)
}

func (c *runConfig) budgetText() string {
	if c.timeLimit > 0 && c.budget.Checks >= unboundedChecks {
		return fmt.Sprintf("for %v", c.timeLimit)
	}
	if c.timeLimit > 0 {
		return fmt.Sprintf("for %v (at most %d checks)", c.timeLimit, c.budget.Checks)
	}
	return fmt.Sprintf("%d checks", c.budget.Checks)
}

func shardText(s string) string {
	if s == "" {
		return ""
	}
	return " (shard " + s + ")"
}
