package gate

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/loopsubjects"
	"github.com/outboxcheck/outboxcheck/brokers/jetstream"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/proccheck"
	"github.com/outboxcheck/outboxcheck/reports"
)

// loopSubject is a subject the CLI can run through the loop contract, with
// what it declares.
type loopSubject struct {
	new         loopcheck.NewSubject
	recovery    time.Duration // its declared recovery time; 0: the default
	maxAttempts int           // 0: the default
	settings    []string      // the server settings it needs
	// dedupeWindow, if set: it needs a real broker, with this window
	// unless the run gives one.
	dedupeWindow time.Duration
}

// loopSubjects are the subjects the CLI can run through the loop contract
// (loopsubjects): the reference relay, its slow-but-correct control, the
// CDC relay, and the loop mutants.
var loopSubjects = func() map[string]loopSubject {
	m := map[string]loopSubject{}
	for _, s := range loopsubjects.Passing {
		m[s.Name] = loopSubject{new: s.New, recovery: s.Recovery, settings: s.Settings, dedupeWindow: s.DedupeWindow}
	}
	for _, mu := range loopsubjects.Mutants {
		m[mu.Name] = loopSubject{new: mu.New, recovery: mu.RecoveryTime(), maxAttempts: mu.MaxAttempts, settings: mu.Settings, dedupeWindow: mu.DedupeWindow}
	}
	return m
}()

// processSubject is a subject in any language, its processes started
// from argv in dir (proccheck).
func processSubject(argv []string, dir string) loopSubject {
	return loopSubject{new: proccheck.New(proccheck.Command{Argv: argv, Dir: dir})}
}

// ScheduleFile is the failing schedule's file in a loop run's report
// directory: `outboxcheck replay` replays it.
const ScheduleFile = "schedule.json"

// runLoop runs c's subject through the loop contract (black-box, real
// time, faults from outside), writes the reports and returns the verdict.
func runLoop(c *RunConfig, ses *session, rep *reports.Report, stdout, stderr io.Writer) error {
	ls, ok := loopSubjects[c.Subject]
	if c.Process != nil {
		ls, ok = processSubject(c.Process, c.ProcessDir), true
		if ls.recovery = c.Recovery; ls.recovery == 0 {
			ls.recovery = proccheck.Recovery
		}
	}
	if !ok {
		return Usagef("--loop runs %s, not %q", LoopNames(), c.Subject)
	}
	opts, drop, err := ses.options(true, false)
	if err != nil {
		return err
	}
	defer drop()
	lopts := loopcheck.Options{DatabaseURL: opts.DatabaseURL, Recovery: ls.recovery, MaxAttempts: ls.maxAttempts, Interrupt: ses.intr.C,
		Parallel: c.Parallel, JetStream: c.JetStream, DedupeWindow: c.DedupeWindow}
	if c.CrashDB {
		if opts.CrashDatabase == nil {
			return Usagef("--crash-db crashes only a server the harness started from the local binaries (this one: %s)", ses.cluster.Source)
		}
		lopts.CrashDatabase, lopts.Parallel = opts.CrashDatabase, 1
	}
	if ls.dedupeWindow > 0 { // it leans on a real broker's deduplication
		lopts.JetStream = true
		if lopts.DedupeWindow == 0 {
			lopts.DedupeWindow = ls.dedupeWindow
		}
	}
	if c.TimeLimit > 0 {
		lopts.Deadline = time.Now().Add(c.TimeLimit)
	}
	if lopts.Parallel == 0 {
		lopts.Parallel = loopcheck.DefaultParallel() // the CLI's relays read no server-wide snapshot
	}
	prog := newProgress(stderr, c.Budget.Checks, lopts.Deadline, c.OnCheck)
	lopts.OnCheck = prog.check
	restore := c.Budget.Apply()
	rec := harness.NewRecorder("outboxcheck/loop/"+c.Subject, nil)
	prog.start()
	res := loopcheck.Run(rec, ls.new, lopts)
	prog.stop()
	restore()
	rep.Seconds = time.Since(rep.Started).Seconds()
	if o := res.Options; o.JetStream {
		rep.Environment.Broker = fmt.Sprintf("NATS JetStream %s (embedded, behind its own fault link), Nats-Msg-Id dedupe window %v", jetstream.ServerVersion, o.DedupeWindow)
	}
	rep.Fill(res.Summary)
	rep.Steps = res.Steps
	rep.SetRate(res.Summary)
	fmt.Fprintf(stdout, "outboxcheck: loop contract, %s; %s\n", res.Coverage(), rate(rep))
	if f := res.Failure; f != nil && !f.Infrastructure {
		if err := saveSchedule(c, rep, res); err != nil {
			return err
		}
		switch {
		case res.Flaky:
			rep.Message += fmt.Sprintf(" (flaky: the shrunk schedule did not fail again in %d more runs)", res.Confirmations)
		case res.Confirmations > 0:
			rep.Message += fmt.Sprintf(" (reproduced %d of %d: the shrunk schedule, run again)", res.Reproduced, res.Confirmations)
		}
	}
	if err := c.write(rep); err != nil {
		return err
	}
	c.saidWhere(stdout)
	return verdict(rep, ses, stdout)
}

// saveSchedule writes the failing schedule beside the report, for replay.
func saveSchedule(c *RunConfig, rep *reports.Report, res loopcheck.Result) error {
	if c.ReportDir == "" || rep.Failure == nil {
		return nil
	}
	f := loopcheck.File{Subject: c.Subject, Property: res.Failure.Property, Message: res.Failure.Message, Options: res.Options, Schedule: res.Schedule,
		Command: c.Process, Dir: c.ProcessDir}
	if err := loopcheck.WriteFile(filepath.Join(c.ReportDir, ScheduleFile), f); err != nil {
		return Usagef("write schedule: %v", err)
	}
	rep.Failure.FailFile = ScheduleFile
	return nil
}

// LeansOnDedupe reports whether the CLI's loop subject name leans on a
// real broker's deduplication, and so turns --jetstream on itself.
func LeansOnDedupe(name string) bool { return loopSubjects[name].dedupeWindow > 0 }

// IsLoopSubject reports whether the CLI runs name through the loop
// contract.
func IsLoopSubject(name string) bool { _, ok := loopSubjects[name]; return ok }

// LoopNames lists the loop contract's subjects.
func LoopNames() string {
	var names []string
	for _, s := range loopsubjects.Passing {
		names = append(names, s.Name)
	}
	return strings.Join(append(names, loopMutantNames()...), ", ")
}

// replayLoop replays a loop run's saved schedule n times and says how
// often it came back. It exits 1 if it reproduced at all.
func replayLoop(ses *session, rep *reports.Report, path string, n int, stdout io.Writer) error {
	f, err := loopcheck.ReadFile(path)
	if err != nil {
		return Usagef("replay: %v", err)
	}
	ls, ok := loopSubjects[f.Subject]
	if f.Command != nil {
		ls, ok = processSubject(f.Command, f.Dir), true
	}
	if !ok {
		return Usagef("replay: the schedule's subject %q is not one the CLI runs through the loop contract", f.Subject)
	}
	opts, drop, err := ses.options(true, false)
	if err != nil {
		return err
	}
	defer drop()
	fmt.Fprintf(stdout, "recorded: %s: %s\nschedule (%s):\n", f.Property, f.Message, harness.Count(len(f.Schedule), "steps"))
	for i, st := range f.Schedule {
		fmt.Fprintf(stdout, "%3d  %s\n", i+1, st)
	}
	o := withDB(f.Options, opts.DatabaseURL)
	if slices.ContainsFunc(f.Schedule, func(st loopcheck.Step) bool { return st.Kind == "crash-db" }) {
		if opts.CrashDatabase == nil {
			return Usagef("replay: the schedule crashes the database, which the harness does only to a server it started from the local binaries (this one: %s)", ses.cluster.Source)
		}
		o.CrashDatabase = opts.CrashDatabase
	}
	var story string // the last replay's, told when none reproduced
	o.OnCheck = func(h *harness.History) { story = h.Story() }
	got, last, err := loopcheck.Replay(ls.new, o, f.Schedule, f.Property, n)
	if err != nil {
		return infraError(err)
	}
	if last != nil {
		fmt.Fprintf(stdout, "last reproduction:\n%s", last.History.Story())
	} else if story != "" {
		fmt.Fprintf(stdout, "last replay (it passed):\n%s", story)
	}
	fmt.Fprintf(stdout, "reproduced %d of %d times (real time: a loop schedule does not replay exactly)\n", got, n)
	if got > 0 {
		return &Error{Code: ExitViolation, Err: fmt.Errorf("%s", reports.Violation), Quiet: true}
	}
	return nil
}

func withDB(o loopcheck.Options, url string) loopcheck.Options { o.DatabaseURL = url; return o }
