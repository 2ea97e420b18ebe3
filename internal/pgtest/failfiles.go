package pgtest

import "flag"

// noFailFiles turns rapid's fail files off (-rapid.nofailfile=true)
// unless the command line set the flag: rapid writes them under
// testdata/rapid/ in the package's folder, which is the work tree, and
// many of these tests fail on purpose (a mutant must be killed). A test
// that fails prints -rapid.seed=N, which replays it; a run that wants the
// files asks with -rapid.nofailfile=false. A test that applies a
// stepcheck.Budget decides for itself (the CLI keeps them in its report
// directory).
func noFailFiles() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "rapid.nofailfile" })
	if f := flag.Lookup("rapid.nofailfile"); f != nil && !given {
		_ = f.Value.Set("true")
	}
}
