package gate

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/outboxcheck/outboxcheck/adapters/loopsubjects"
	"github.com/outboxcheck/outboxcheck/adapters/sqlfile"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/reports"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// Replay runs the recorded counterexample of the report in dir again and
// prints it step by step, the subject's result beside the model's
// expectation; a loop contract report's schedule is replayed times times.
// It exits as the replay comes out.
func Replay(dir string, times int, url string, stdout, stderr io.Writer) error {
	if times < 1 {
		return Usagef("replay: --times must be at least 1, got %d", times)
	}
	arg := dir
	dir, err := filepath.Abs(arg)
	if err != nil {
		return Usagef("replay: %v", err)
	}
	rep, err := reports.Read(dir)
	if err != nil {
		return Usagef("replay %s: %v", arg, err)
	}
	if rep.Message != "" {
		fmt.Fprintf(stdout, "report: %s, verdict %s (%s)\n", rep.Subject, rep.Verdict, rep.Message)
	} else {
		fmt.Fprintf(stdout, "report: %s, verdict %s\n", rep.Subject, rep.Verdict)
	}
	ce := rep.Failure
	if rep.Verdict == reports.Pass || ce == nil || ce.FailFile == "" {
		return nothingToReplay(rep, stdout)
	}
	failFile := filepath.Join(dir, ce.FailFile)
	if _, err := os.Stat(failFile); err != nil {
		return Usagef("replay: the report's fail file is missing: %v", err)
	}
	if ce.FailFile == ScheduleFile {
		ses, err := openSession(url, stderr, false, loopsubjects.Settings(rep.Subject))
		if err != nil {
			return err
		}
		defer ses.close()
		return replayLoop(ses, rep, failFile, times, stdout)
	}
	var newSubject stepcheck.NewSubject
	if rep.SQLQueries != "" {
		newSubject, err = sqlfile.New(reportSQL(dir, rep.SQLQueries), reportSQL(dir, rep.SQLSchema))
	} else {
		newSubject, _, err = SubjectByName(rep.Subject)
	}
	if err != nil {
		return Usagef("replay: %v", err)
	}
	ses, err := openSession(url, stderr, false, nil)
	if err != nil {
		return err
	}
	defer ses.close()
	opts, drop, err := ses.options(rep.Faults, rep.Concurrent)
	if err != nil {
		return err
	}
	defer drop()
	rec := harness.NewRecorder("outboxcheck/"+rep.Subject, nil)
	var sum harness.Summary
	opts.MaxChecks = 1 // the fail file's, and not a random one after it
	if err := harness.InTempDir(func() {
		// rapid also replays every fail file of the subject's name under
		// the working directory's testdata: not the user's
		restore := harness.Budget{Checks: 1, FailFile: failFile}.Apply()
		sum = stepcheck.Run(rec, newSubject, opts)
		restore()
	}); err != nil {
		return infraError(err)
	}
	if why := unusableFailFile(rec.Output()); why != "" {
		return Usagef("replay: the fail file %s cannot be replayed: %s", ce.FailFile, why)
	}
	again := &reports.Report{Subject: rep.Subject}
	again.Fill(sum)

	fmt.Fprintf(stdout, "recorded: %s; replayed:\n", harness.Count(len(ce.Steps), "steps"))
	if again.Failure != nil {
		for _, s := range again.Failure.Steps {
			fmt.Fprintf(stdout, "%3d  %s  %s %s %s\n", s.N, s.Clock, s.Actor, s.Action, s.Input)
			if s.Result != "" {
				fmt.Fprintf(stdout, "       actual: %s\n", s.Result)
			}
			if s.Expect != "" {
				fmt.Fprintf(stdout, "       model:  %s\n", s.Expect)
			} else {
				fmt.Fprintln(stdout, "       model:  agrees")
			}
		}
	}
	switch {
	case again.Verdict == rep.Verdict && sameFailure(again.Failure, rep.Failure):
		fmt.Fprintf(stdout, "reproduced: %s\n", again.Message)
	case again.Verdict == reports.Pass:
		fmt.Fprintln(stdout, "NOT reproduced: every property held this time")
	default:
		fmt.Fprintf(stdout, "came out differently: %s (recorded: %s)\n", again.Message, rep.Message)
	}
	if code := again.ExitCode(); code != ExitOK {
		return &Error{Code: code, Err: fmt.Errorf("%s", again.Verdict), Quiet: true}
	}
	return nil
}

// nothingToReplay is the exit of a report without a counterexample to run
// again. A pass exits 0, and a subject error that stopped no check 4, as
// their runs did; any other such report cannot be replayed, exit 2: an
// interrupted run found nothing, a merge keeps its counterexample in its
// shard's report, and a run the infrastructure stopped kept none. Never
// 130: replay received no signal.
func nothingToReplay(rep *reports.Report, stdout io.Writer) error {
	switch {
	case rep.Verdict == reports.Pass:
		fmt.Fprintln(stdout, "the run passed: there is no counterexample to replay")
		return nil
	case rep.Verdict == reports.SubjectError:
		return &Error{Code: ExitSubject, Err: fmt.Errorf("replay: the report has no recorded counterexample to replay (verdict %s)", rep.Verdict)}
	case rep.Verdict == reports.Interrupted:
		return Usagef("replay: nothing to replay: the run was interrupted before it found anything (verdict %s)", rep.Verdict)
	case len(rep.Merged) > 0:
		return Usagef("replay: a merged report keeps no fail file: replay the report of the shard that found the failure")
	}
	return Usagef("replay: the report has no recorded counterexample to replay (verdict %s)", rep.Verdict)
}

// unusableFailFile is rapid's reason for passing over a fail file (it
// then runs a fresh random check instead, which proves nothing), or "".
func unusableFailFile(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if i := strings.Index(l, "[rapid] ignoring fail file: "); i >= 0 {
			return l[i+len("[rapid] ignoring fail file: "):]
		}
		if strings.Contains(l, "[rapid] fail file") && strings.Contains(l, "is no longer valid") {
			return "it does not replay its recorded length (it was recorded for other code, or cut short)"
		}
	}
	return ""
}

// sameFailure: the same property, violated the same way, or the same
// operation of the subject's failing (where it first failed may differ:
// a replay runs one check).
func sameFailure(a, b *reports.Counterexample) bool {
	return a != nil && b != nil && a.Property == b.Property && a.Operation == b.Operation &&
		(a.Operation != "" || a.Message == b.Message)
}
