package gate

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/outboxcheck/outboxcheck/reports"
)

// FailFileName is the counterexample's rapid fail file in a report
// directory: `outboxcheck replay` replays it.
const FailFileName = "counterexample.fail"

// OwnReportDir makes dir (and its parents) for a report and checks a file
// can be written in it; it returns the absolute path. A directory that
// holds anything but an outboxcheck report is refused: a run writes only
// files it owns, and never over a user's.
func OwnReportDir(dir string) (string, error) {
	abs, _, err := MakeReportDir(dir)
	return abs, err
}

// MakeReportDir is OwnReportDir, and says which directory it made, if it
// made one (the topmost of those it made, else ""): a run that ends
// before its report removes it again (RemoveMadeReportDir).
func MakeReportDir(dir string) (abs, made string, err error) {
	abs, err = filepath.Abs(dir)
	if err != nil {
		return "", "", Usagef("--report-dir: %v", err)
	}
	made = topmostMissing(abs)
	abs, err = ownReportDir(abs, dir)
	if err != nil {
		made = ""
	}
	return abs, made, err
}

// topmostMissing is the topmost directory of abs's that does not exist
// yet, or "".
func topmostMissing(abs string) string {
	made := ""
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			return made
		}
		made = d
		if filepath.Dir(d) == d {
			return made
		}
	}
}

// RemoveMadeReportDir removes made (MakeReportDir's) if it holds no file
// still: a run that ended before its report leaves nothing behind. What
// it did not make, or what holds a file, it leaves.
func RemoveMadeReportDir(made string) {
	if made == "" {
		return
	}
	filepath.WalkDir(made, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			made = "" // a file: keep it all
			return filepath.SkipAll
		}
		return nil
	})
	if made != "" {
		os.RemoveAll(made) // directories only
	}
}

func ownReportDir(abs, dir string) (string, error) {
	entries, err := os.ReadDir(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return "", Usagef("--report-dir: %v", err)
	case len(entries) > 0:
		if _, rerr := reports.Read(abs); rerr != nil {
			return "", Usagef("--report-dir %s is not empty and holds no outboxcheck report: give a new or empty directory", dir)
		}
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", Usagef("--report-dir: %v", err)
	}
	return abs, CheckWritable(abs)
}

// clearCounterexamples removes the counterexample files of the report
// that a run in dir is about to replace (the directory is one of
// outboxcheck's, see OwnReportDir): a run that finds nothing must not
// leave an earlier run's beside its own report.
func clearCounterexamples(dir string) error {
	if dir == "" {
		return nil
	}
	for _, name := range []string{FailFileName, ScheduleFile, queriesCopy, schemaCopy} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return Usagef("report directory: %v", err)
		}
	}
	return nil
}

// CheckWritable fails early, before a long run, if dir cannot take a file.
func CheckWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".outboxcheck-probe-*")
	if err != nil {
		return Usagef("cannot write to %s: %v", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}
