package gate

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/reports"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// RunConfig is a checked `run` command line.
type RunConfig struct {
	Subject    string               // its name in the report; for the loop contract, the subject run
	NewSubject stepcheck.NewSubject // the step contract's subject (not for Loop)
	Budget     harness.Budget       // Seed drawn already: the report names it
	Faults     bool
	Concurrent bool
	URL        string // PostgreSQL server URL; "": $OUTBOXCHECK_DATABASE_URL, Docker or local binaries
	ReportDir  string // absolute, made by OwnReportDir; "" for none
	// MadeReportDir is the directory MakeReportDir made for ReportDir, if
	// it made one: removed again if the run ends before its report.
	MadeReportDir string
	JUnit         string        // absolute; "" for none
	Shard         string        // "i/n", named in the report; Budget holds the shard's seed and checks
	TimeLimit     time.Duration // no check starts after it; 0: none
	Verbose       bool          // print rapid's output as it comes
	Args          []string      // the command line, for the report
	SQLQueries    string        // absolute; the SQL contract's files, or ""
	SQLSchema     string
	Loop          bool // the loop contract instead of the step contract
	Parallel      int  // Loop: schedules at once; 0 the default
	// JetStream (Loop): a real broker, an embedded NATS JetStream behind
	// its own link; DedupeWindow its Nats-Msg-Id window (0: 2 s).
	JetStream    bool
	DedupeWindow time.Duration
	// CrashDB (Loop): crash-db steps crash the server, which must be the
	// harness's own; schedules then run one at a time.
	CrashDB bool
	// Process, with Loop, is a subject in any language: the program and
	// its arguments (proccheck.Command), run in ProcessDir (absolute).
	Process    []string
	ProcessDir string
	Recovery   time.Duration // Process: its declared recovery; 0 the loop contract's default
	// Settings are server settings the run needs ("name=value"), besides
	// those the loop subject declares: a server the harness starts runs
	// with them, one given by URL must already.
	Settings []string

	// OnCheck, if set, sees every check (or schedule) as it ends, shrinking
	// runs among them.
	OnCheck func(*harness.History)
}

// UnboundedChecks is the check count of a time budget alone: the time
// ends the run.
const UnboundedChecks = 1_000_000

// NoShrinking is the shrink time that turns shrinking off: rapid's
// shrinker stops at its deadline, and this one has passed before it
// starts (Budget's own zero keeps rapid's default, 30 s).
const NoShrinking = time.Nanosecond

// Run runs c: a session on PostgreSQL, the subject through its contract,
// the reports; the error carries the exit code (nil: every property held).
func Run(c *RunConfig, stdout, stderr io.Writer) (err error) {
	defer func() {
		if err != nil {
			RemoveMadeReportDir(c.MadeReportDir) // only if no report got into it
		}
	}()
	ses, err := openSession(c.URL, stderr, true, c.serverSettings())
	if err != nil {
		return err
	}
	defer ses.close()
	ses.sweep(stderr)
	if c.SQLQueries != "" {
		if err := preflight(ses, c.SQLQueries, c.SQLSchema); err != nil {
			return err
		}
	}
	// Only now, with a report sure to follow, the earlier one's files go.
	if err := clearCounterexamples(c.ReportDir); err != nil {
		return err
	}
	if c.Loop {
		contract := "the loop contract"
		if c.Process != nil {
			contract = "the process contract"
		}
		fmt.Fprintf(stdout, "outboxcheck: %s through %s on PostgreSQL %s (%s), %s, seed %d\n",
			c.Subject, contract, ses.cluster.Version, ses.cluster.Source, strings.ReplaceAll(c.budgetText(), "check", "schedule"), c.Budget.Seed)
		return runLoop(c, ses, c.newReport(ses), stdout, stderr)
	}
	opts, drop, err := ses.options(c.Faults, c.Concurrent)
	if err != nil {
		return err
	}
	defer drop()
	cluster := ses.cluster
	if c.TimeLimit > 0 {
		opts.Deadline = time.Now().Add(c.TimeLimit)
	}
	fmt.Fprintf(stdout, "outboxcheck: %s on PostgreSQL %s (%s), %s, seed %d%s, faults %v\n",
		c.Subject, cluster.Version, cluster.Source, c.budgetText(), c.Budget.Seed, shardText(c.Shard), c.Faults)

	prog := newProgress(stderr, c.Budget.Checks, opts.Deadline, c.OnCheck)
	opts.OnCheck = prog.check
	var live io.Writer
	if c.Verbose {
		live = stderr
	}
	rep := c.newReport(ses)

	budget := c.Budget
	budget.KeepFailFiles = c.ReportDir != ""
	opts.Interrupt = ses.intr.C
	var sum harness.Summary
	rec := harness.NewRecorder("outboxcheck/"+c.Subject, live)
	failFile, err := harness.FailFileIn(c.ReportDir, FailFileName, func() {
		restore := budget.Apply()
		defer restore()
		prog.start()
		sum = stepcheck.Run(rec, c.NewSubject, opts)
		prog.stop()
	})
	if err != nil {
		return Usagef("report directory: %v", err)
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

func (c *RunConfig) budgetText() string {
	if c.TimeLimit > 0 && c.Budget.Checks >= UnboundedChecks {
		return fmt.Sprintf("for %v", c.TimeLimit)
	}
	if c.TimeLimit > 0 {
		return fmt.Sprintf("for %v (at most %d checks)", c.TimeLimit, c.Budget.Checks)
	}
	return harness.Count(c.Budget.Checks, "checks")
}

func shardText(s string) string {
	if s == "" {
		return ""
	}
	return " (shard " + s + ")"
}

// serverSettings are what c's server must run with: the settings asked
// for, and those the loop subject needs.
func (c *RunConfig) serverSettings() []string {
	out := slices.Clone(c.Settings)
	if ls, ok := loopSubjects[c.Subject]; ok && c.Loop && c.Process == nil {
		for _, s := range ls.settings {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}
