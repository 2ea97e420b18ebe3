package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/outboxcheck/outboxcheck/reports"
)

// reportCmd merges shard reports. It refuses, exit 2 and nothing written,
// an output that is one of its inputs, inputs that are not every shard of
// one run (reports.Merge), and shards that together have no verdict, one
// of them interrupted and none finding anything (130 is a signal's, and
// merge received none).
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
	if *out == "" || fs.NArg() == 0 {
		return usageErrorf("report merge needs --out DIR and at least one report directory")
	}
	if in, ok := sameDirAs(*out, fs.Args()); ok {
		return usageErrorf("report merge: --out %s is the report %s, one of those to merge: give another directory", *out, in)
	}
	var rs []*reports.Report
	for _, d := range fs.Args() {
		r, err := reports.Read(d)
		if err != nil {
			return usageErrorf("report merge: %v", err)
		}
		rs = append(rs, r)
	}
	merged, err := reports.Merge(rs)
	if err != nil {
		return usageErrorf("report merge: %v", err)
	}
	if merged.Verdict == reports.Interrupted {
		return usageErrorf("report merge: shard %s was interrupted before it found anything, and no other shard found anything: run it again, then merge", interrupted(rs))
	}
	dir, err := ownReportDir(*out)
	if err != nil {
		return err
	}
	if err := reports.Write(dir, merged); err != nil {
		return usageErrorf("write report: %v", err)
	}
	fmt.Fprintf(stdout, "merged %d reports into %s: %s, %d checks\n", len(rs), filepath.Clean(*out), merged.Verdict, merged.Checks)
	if code := merged.ExitCode(); code != exitOK {
		return &codedError{code: code, err: fmt.Errorf("merged verdict: %s", merged.Verdict)}
	}
	return nil
}

// sameDirAs is the directory of dirs that out is, by any path (a symlink,
// "a/../a": os.SameFile compares the files themselves), if one is. An out
// that does not exist yet is none of them.
func sameDirAs(out string, dirs []string) (string, bool) {
	o, err := os.Stat(out)
	if err != nil {
		return "", false
	}
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && os.SameFile(o, fi) {
			return d, true
		}
	}
	return "", false
}

// interrupted names the shards of rs a signal stopped before they found
// anything.
func interrupted(rs []*reports.Report) string {
	var names []string
	for _, r := range rs {
		if r.Verdict == reports.Interrupted {
			names = append(names, r.Shard)
		}
	}
	return strings.Join(names, ", ")
}
