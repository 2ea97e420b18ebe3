package main

import (
	"io"

	"github.com/outboxcheck/outboxcheck/gate"
)

// reportCmd is `outboxcheck report merge`: gate.Merge.
func reportCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && helpFlag(args[0]) {
		args = append([]string{"merge"}, args...) // merge is report's one command: its usage
	}
	if len(args) == 0 || args[0] != "merge" {
		return usageErrorf("usage: outboxcheck report merge --out DIR REPORT-DIR...")
	}
	fs := newFlags("report merge", "Merges the reports of shards (outboxcheck run --shard i/n --report-dir ...) into one.", stdout)
	out := fs.String("out", "", "the merged report's directory (required): a new one, not one of the shards'")
	if help, err := parseFlags(fs, args[1:]); help || err != nil {
		return err
	}
	return gate.Merge(*out, fs.Args(), stdout)
}
