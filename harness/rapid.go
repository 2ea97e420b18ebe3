package harness

// rapid's configuration is process-wide: its flags (-rapid.checks, seed,
// steps, shrinktime, failfile, nofailfile) and the working directory, under
// which it writes fail files (testdata/rapid/<test>/) and from which it
// replays any it finds there first. Everything outboxcheck does to that
// state is in this file:
//
//   - Budget.Apply sets the flags for one run and puts them back; a flag
//     given on the command line wins;
//   - ShrinkTime and AverageSteps read them for the contracts;
//   - NoFailFilesUnlessAsked keeps this repository's tests from writing
//     fail files into the work tree;
//   - FailFileIn and InTempDir give rapid a fresh working directory for a
//     run (rapid has no setting for where fail files go), keeping the fail
//     file it wrote, if any.
//
// Runs that apply different budgets, or run in different directories,
// must not overlap.

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// prepareRapid makes rapid usable outside `go test`: it consults
// testing.Short, which panics unless the testing flags are registered and
// parsed.
func prepareRapid() {
	testing.Init()
	if !flag.Parsed() {
		_ = flag.CommandLine.Parse(nil)
	}
}

// rapidFlagsGiven names the -rapid.* flags among args (a command line).
func rapidFlagsGiven(args []string) map[string]bool {
	given := map[string]bool{}
	for _, a := range args {
		if a == "--" || a == "-args" {
			break
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && strings.HasPrefix(name, "rapid.") {
			given[name] = true
		}
	}
	return given
}

// Budget is how much rapid may spend on a run. Zero fields keep rapid's
// current setting (its defaults, or the -rapid.* flags of a test).
type Budget struct {
	Checks     int           // checks to run when nothing fails
	Steps      int           // average actions per check
	Seed       uint64        // the run's first seed; 0 draws one
	ShrinkTime time.Duration // how long to spend shrinking a failure
	// FailFile, if set, is a fail file to replay (rapid.failfile).
	FailFile string
	// KeepFailFiles lets rapid save a failure's fail file, under
	// testdata/rapid/ in the working directory; by default none is written.
	KeepFailFiles bool
}

// Apply sets rapid's flags to the budget and returns a function that puts
// them back. A -rapid.* flag given on the command line wins over the
// budget: `go test -rapid.checks=1000` scales a test that applies one.
// rapid's settings are process-wide: runs that apply different budgets
// must not overlap.
func (b Budget) Apply() (restore func()) {
	prepareRapid()
	given := rapidFlagsGiven(os.Args[1:])
	set := map[string]string{"rapid.nofailfile": fmt.Sprint(!b.KeepFailFiles), "rapid.failfile": b.FailFile}
	if b.Checks > 0 {
		set["rapid.checks"] = fmt.Sprint(b.Checks)
	}
	if b.Steps > 0 {
		set["rapid.steps"] = fmt.Sprint(b.Steps)
	}
	if b.Seed != 0 {
		set["rapid.seed"] = fmt.Sprint(b.Seed)
	}
	if b.ShrinkTime > 0 {
		set["rapid.shrinktime"] = b.ShrinkTime.String()
	}
	old := map[string]string{}
	for name, v := range set {
		if given[name] {
			continue
		}
		f := flag.Lookup(name)
		old[name] = f.Value.String()
		if err := f.Value.Set(v); err != nil {
			panic(fmt.Sprintf("properties: rapid flag %s=%s: %v", name, v, err)) // our own values: a bug
		}
	}
	return func() {
		for name, v := range old {
			_ = flag.Lookup(name).Value.Set(v)
		}
	}
}

// ShrinkTime is rapid's -rapid.shrinktime (Budget.ShrinkTime sets it).
func ShrinkTime() time.Duration {
	if f := flag.Lookup("rapid.shrinktime"); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			if d, ok := g.Get().(time.Duration); ok {
				return d
			}
		}
	}
	return 30 * time.Second
}

// AverageSteps is rapid's -rapid.steps (Budget.Steps sets it), at most
// MaxSteps.
func AverageSteps() int {
	if f := flag.Lookup("rapid.steps"); f != nil {
		if n, err := strconv.Atoi(f.Value.String()); err == nil && n > 0 {
			return min(n, MaxSteps)
		}
	}
	return 30
}

// NoFailFilesUnlessAsked turns rapid's fail files off (-rapid.nofailfile=true)
// unless the command line set the flag: rapid writes them under
// testdata/rapid/ in the package's folder, which is the work tree, and
// many of these tests fail on purpose (a mutant must be killed). A test
// that fails prints -rapid.seed=N, which replays it; a run that wants the
// files asks with -rapid.nofailfile=false. A test that applies a
// harness.Budget decides for itself (the CLI keeps them in its report
// directory).
func NoFailFilesUnlessAsked() {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "rapid.nofailfile" })
	if f := flag.Lookup("rapid.nofailfile"); f != nil && !given {
		_ = f.Value.Set("true")
	}
}

// FailFileIn runs fn with a fresh directory inside dir as the working
// directory, because rapid writes fail files relative to it, and replays
// any it finds there first: a fresh one holds none of an earlier run's,
// nor of the user's. The fail file fn left, if any, becomes dir's
// name (returned, "" if none); the scratch
// directory is removed. dir "" runs fn where it is and keeps nothing.
func FailFileIn(dir, name string, fn func()) (failFile string, err error) {
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
	if err := os.Rename(files[len(files)-1], filepath.Join(dir, name)); err != nil {
		return "", fmt.Errorf("keep the fail file: %w", err)
	}
	return name, nil
}

// InTempDir runs fn in a fresh temporary working directory, removed after.
func InTempDir(fn func()) error {
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
