package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/outboxcheck/outboxcheck/reports"
)

// failFileName is the counterexample's rapid fail file in a report
// directory: `outboxcheck replay` replays it.
const failFileName = "counterexample.fail"

// ownReportDir makes dir (and its parents) for a report and checks a file
// can be written in it; it returns the absolute path. A directory that
// holds anything but an outboxcheck report is refused: a run writes only
// files it owns, and never over a user's.
func ownReportDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", usageErrorf("--report-dir: %v", err)
	}
	entries, err := os.ReadDir(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return "", usageErrorf("--report-dir: %v", err)
	case len(entries) > 0:
		if _, rerr := reports.Read(abs); rerr != nil {
			return "", usageErrorf("--report-dir %s is not empty and holds no outboxcheck report: give a new or empty directory", dir)
		}
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", usageErrorf("--report-dir: %v", err)
	}
	return abs, checkWritable(abs)
}

// inScratch runs fn with a fresh directory inside dir as the working
// directory, because rapid writes fail files relative to it, and replays
// any it finds there first: a fresh one holds none of an earlier run's,
// nor of the user's. The fail file fn left, if any, becomes dir's
// counterexample.fail (the name returned, "" if none); the scratch
// directory is removed. dir "" runs fn where it is and keeps nothing.
func inScratch(dir string, fn func()) (failFile string, err error) {
	if dir == "" {
		fn()
		return "", nil
	}
	old, err := os.Getwd()
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(dir, ".rapid-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chdir(tmp); err != nil {
		return "", err
	}
	fn()
	if err := os.Chdir(old); err != nil {
		return "", err
	}
	files, _ := filepath.Glob(filepath.Join(tmp, "testdata", "rapid", "*", "*.fail"))
	if len(files) == 0 {
		return "", nil
	}
	slices.Sort(files)
	if err := os.Rename(files[len(files)-1], filepath.Join(dir, failFileName)); err != nil {
		return "", fmt.Errorf("keep the fail file: %w", err)
	}
	return failFileName, nil
}

// clearCounterexamples removes the counterexample files of the report
// that a run in dir is about to replace (the directory is one of
// outboxcheck's, see ownReportDir): a run that finds nothing must not
// leave an earlier run's beside its own report.
func clearCounterexamples(dir string) error {
	if dir == "" {
		return nil
	}
	for _, name := range []string{failFileName, scheduleFile, queriesCopy, schemaCopy} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return usageErrorf("report directory: %v", err)
		}
	}
	return nil
}

// inTempDir runs fn in a fresh temporary working directory, removed after.
func inTempDir(fn func()) error {
	old, err := os.Getwd()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "outboxcheck-replay-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chdir(tmp); err != nil {
		return err
	}
	defer os.Chdir(old)
	fn()
	return nil
}
