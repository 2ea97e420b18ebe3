package main

import (
	"fmt"
	"io"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/properties"
	"github.com/outboxcheck/outboxcheck/reports"
)

// loopSubjects are the subjects the CLI can run through the loop contract.
var loopSubjects = map[string]loopcheck.NewSubject{
	"reference":   refloop.New,
	"notify-only": refloop.NotifyOnly,
}

// loopProperties are what the loop contract checks.
var loopProperties = []string{"no-loss", "no-phantom", "effect-at-most-once", "effect-exactly-once"}

// runLoop runs c's subject through the loop contract (black-box, real
// time, faults from outside), writes the reports and returns the verdict.
func runLoop(c *runConfig, ses *session, rep *reports.Report, stdout io.Writer) error {
	newSubject, ok := loopSubjects[c.subject]
	if !ok {
		return usageErrorf("--loop runs reference or notify-only, not %q", c.subject)
	}
	opts, drop, err := ses.options(true, false)
	if err != nil {
		return err
	}
	defer drop()
	lopts := loopcheck.Options{DatabaseURL: opts.DatabaseURL}
	restore := c.budget.Apply()
	rec := properties.NewRecorder("outboxcheck/loop/"+c.subject, nil)
	res := loopcheck.Run(rec, newSubject, lopts)
	restore()
	sum := properties.Summary{Checks: res.Checks, Failure: res.Failure}
	if res.Failure != nil {
		sum.First = &properties.FirstFailure{Check: res.Checks}
	}
	rep.Seconds = time.Since(rep.Started).Seconds()
	rep.Fill(sum)
	rep.Only(loopProperties, "the loop contract sees the end state and effects only, not rows or claims")
	fmt.Fprintf(stdout, "outboxcheck: loop contract, %d schedules\n", res.Checks)
	if f := res.Failure; f != nil && !f.Infrastructure {
		n, err := loopcheck.Replay(newSubject, lopts, res.Schedule, f.Property, 3)
		if err != nil {
			return infraError(err)
		}
		rep.Message += fmt.Sprintf(" (the schedule reproduced %d of 3 times on replay)", n)
	}
	if err := c.write(rep); err != nil {
		return err
	}
	return verdict(rep, stdout)
}
