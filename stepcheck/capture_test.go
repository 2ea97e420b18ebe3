package stepcheck_test

import (
	"flag"
	"testing"
)

// setFlag sets a rapid flag for the rest of the test.
func setFlag(t *testing.T, name, value string) { t.Helper(); setFlagTB(t, name, value) }

func setFlagTB(t testing.TB, name, value string) {
	t.Helper()
	f := flag.Lookup(name)
	old := f.Value.String()
	if err := flag.Set(name, value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { flag.Set(name, old) })
}
