// The run's outputs: its report, the files written from it, and the
// verdict printed and turned into the exit code.

package gate

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/reports"
)

func (c *RunConfig) newReport(ses *session) *reports.Report {
	ctx, cancel := context.WithTimeout(ses.ctx, 10*time.Second)
	defer cancel()
	settings, _ := ses.cluster.Settings(ctx) // a report without them is still a report
	return &reports.Report{Contract: c.contract(), Subject: c.Subject, SQLQueries: c.SQLQueries, SQLSchema: c.SQLSchema, Args: c.Args, Seed: c.Budget.Seed,
		Shard: c.Shard, Faults: c.Faults, Concurrent: c.Concurrent, Started: time.Now(),
		Environment: reports.Environment{Tool: Version(), Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH,
			Postgres: ses.cluster.Version, PostgresSource: string(ses.cluster.Source), ServerSettings: settings}}
}

// contract names what the run checks its subject through.
func (c *RunConfig) contract() string {
	if c.Loop {
		return reports.LoopContract
	}
	return reports.StepContract
}

// write writes the report directory and the JUnit file, if asked for.
func (c *RunConfig) write(rep *reports.Report) error {
	if err := copySQL(c.ReportDir, rep); err != nil {
		return err
	}
	if c.ReportDir != "" {
		if err := reports.Write(c.ReportDir, rep); err != nil {
			return Usagef("write report: %v", err)
		}
	}
	if c.JUnit != "" {
		var b strings.Builder
		if err := rep.JUnit(&b); err != nil {
			return err
		}
		if err := reports.WriteFile(c.JUnit, []byte(b.String())); err != nil {
			return Usagef("write JUnit: %v", err)
		}
	}
	return nil
}

// verdict prints the outcome and turns it into the exit code.
func verdict(rep *reports.Report, ses *session, stdout io.Writer) error {
	switch rep.Verdict {
	case reports.Pass:
		if rep.Checks == 0 {
			// A gate that ran nothing must not go green.
			return Usagef("the time budget ended before any check ran: nothing was judged (give --time more, or --checks)")
		}
		fmt.Fprintln(stdout, "outboxcheck: every property held")
		return nil
	case reports.Interrupted:
		fmt.Fprintf(stdout, "outboxcheck: %s\n", rep.Message)
		return ses.intr.err()
	case reports.Infrastructure:
		if err := ses.interrupted(); err != nil {
			return err // what broke was the interrupt's doing, not the plumbing's
		}
		return infraError(fmt.Errorf("%s", rep.Message))
	}
	ce := rep.Failure
	if rep.Verdict != reports.SubjectError { // its message is the last line's
		fmt.Fprintln(stdout, rep.Message)
	}
	switch {
	case ce != nil && ce.Operation != "":
		fmt.Fprintf(stdout, "where %s first failed (%s):\n", ce.Operation, harness.Count(ce.StepCount(), "steps"))
	case ce != nil:
		fmt.Fprintf(stdout, "counterexample (%s, first failed at check %d):\n", harness.Count(ce.StepCount(), "steps"), ce.FirstCheck)
	}
	if ce != nil {
		for _, s := range ce.Steps {
			fmt.Fprintln(stdout, s.String())
		}
	}
	if rep.Verdict == reports.SubjectError {
		return &Error{Code: ExitSubject, Err: fmt.Errorf("%s", rep.Message)}
	}
	if rep.Verdict == reports.Panic {
		return &Error{Code: ExitViolation, Err: fmt.Errorf("the subject panicked")}
	}
	if rep.Interrupted {
		return &Error{Code: ExitViolation, Err: fmt.Errorf("property violated: %s (interrupted while shrinking: the counterexample is kept, shrunk as far as it got)", ce.Property)}
	}
	return &Error{Code: ExitViolation, Err: fmt.Errorf("property violated: %s", ce.Property)}
}

// saidWhere says where the report went, if it was written.
func (c *RunConfig) saidWhere(stdout io.Writer) {
	if c.ReportDir != "" {
		fmt.Fprintf(stdout, "outboxcheck: report in %s (report.html, report.md, report.json)\n", c.ReportDir)
	}
}

// rate is "N steps, R steps/s" (Report.SetRate).
func rate(rep *reports.Report) string {
	return fmt.Sprintf("%d steps, %.0f steps/s", rep.Steps, rep.StepsPerSecond)
}
