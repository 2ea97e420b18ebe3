package gate

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/outboxcheck/outboxcheck/reports"
)

// Merge merges the reports of a run's shards in dirs into a new report
// in out. It refuses, exit 2 and nothing written, an out that is one of
// dirs, reports that are not every shard of one run (reports.Merge), and
// shards that together have no verdict, one of them interrupted and none
// finding anything (130 is a signal's, and merge received none).
func Merge(out string, dirs []string, stdout io.Writer) error {
	if out == "" || len(dirs) == 0 {
		return Usagef("report merge needs --out DIR and at least one report directory")
	}
	if in, ok := sameDirAs(out, dirs); ok {
		return Usagef("report merge: --out %s is the report %s, one of those to merge: give another directory", out, in)
	}
	var rs []*reports.Report
	for _, d := range dirs {
		r, err := reports.Read(d)
		if err != nil {
			return Usagef("report merge: %v", err)
		}
		rs = append(rs, r)
	}
	merged, err := reports.Merge(rs)
	if err != nil {
		return Usagef("report merge: %v", err)
	}
	if merged.Verdict == reports.Interrupted {
		return Usagef("report merge: shard %s was interrupted before it found anything, and no other shard found anything: run it again, then merge", interrupted(rs))
	}
	dir, err := OwnReportDir(out)
	if err != nil {
		return err
	}
	if err := reports.Write(dir, merged); err != nil {
		return Usagef("write report: %v", err)
	}
	fmt.Fprintf(stdout, "merged %d reports into %s: %s, %d checks\n", len(rs), filepath.Clean(out), merged.Verdict, merged.Checks)
	if code := merged.ExitCode(); code != ExitOK {
		return &Error{Code: code, Err: fmt.Errorf("merged verdict: %s", merged.Verdict)}
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
