package main

import (
	"io"

	"github.com/outboxcheck/outboxcheck/gate"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

func replayCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("replay REPORT-DIR", "Runs the recorded counterexample of a report again and prints it step by step,\nthe subject's result beside the model's expectation. Exits as the replay comes out.", stdout)
	times := fs.Int("times", loopcheck.Replays, "a loop contract report: how many times to replay its schedule (real time does not replay exactly)")
	url := fs.String("database-url", "", "PostgreSQL server URL (default: $OUTBOXCHECK_DATABASE_URL, else Docker, else local binaries)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErrorf("replay takes one report directory, got %d arguments", fs.NArg())
	}
	return gate.Replay(fs.Arg(0), *times, *url, stdout, stderr)
}
