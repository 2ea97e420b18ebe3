package loopcheck

import (
	"slices"
	"testing"
	"time"
)

// TestOverrunRunsEachWindowOutageToItsLongest: dedupe-past-window's
// story with an outage 140 ms past the window came back 8 of 10 (a
// resend at the heal may still meet its first copy's id before the
// server purges it); told with the outage a second past, it does not
// race that purge.
func TestOverrunRunsEachWindowOutageToItsLongest(t *testing.T) {
	s := Schedule{{Kind: "commit", N: 1}, {Kind: "window-outage", For: 140 * time.Millisecond}, {Kind: "poison"}}
	got := overrun(s)
	want := slices.Clone(s)
	want[1].For = maxWindowOverrun
	if !slices.Equal(got, want) {
		t.Fatalf("overrun = %v, want %v", got, want)
	}
	if s[1].For != 140*time.Millisecond {
		t.Fatal("overrun changed its argument")
	}
	if got := overrun(want); got != nil {
		t.Fatalf("overrun of outages already at their longest = %v, want nil", got)
	}
	if got := overrun(Schedule{{Kind: "commit", N: 1}}); got != nil {
		t.Fatalf("overrun without an outage = %v, want nil", got)
	}
}
