package loopcheck

import (
	"slices"
	"testing"
	"time"
)

const msec = time.Millisecond

// Times aimed a few ms from a deadline move further to their own side;
// unaimed steps, times already clear of it, and steps whose aimed field
// is another are left as they are.
func TestWiden(t *testing.T) {
	for _, c := range []struct{ d, aim, want time.Duration }{
		{502 * msec, 500 * msec, 600 * msec},
		{498 * msec, 500 * msec, 400 * msec},
		{1010 * msec, 500 * msec, 1100 * msec}, // 2 × the deadline + 10 ms
		{30*time.Second + 2*msec, 30 * time.Second, 30*time.Second + 250*msec},
		{52 * msec, 50 * msec, 70 * msec},
		{48 * msec, 50 * msec, 30 * msec},
		{500 * msec, 500 * msec, 500 * msec}, // on the deadline: nothing to widen
		{700 * msec, 500 * msec, 700 * msec}, // clear of it already
		{100 * msec, 500 * msec, 100 * msec}, // below half the deadline: not aimed at it
	} {
		if got := widened(c.d, c.aim); got != c.want {
			t.Errorf("widened(%v, %v) = %v, want %v", c.d, c.aim, got, c.want)
		}
	}
	s := Schedule{
		{Kind: "commit", N: 1},
		{Kind: "broker-slow", For: 498 * msec, Delay: 502 * msec, Aim: 500 * msec, N: 3}, // For is the window, not aimed
		{Kind: "slow-payment", For: 998 * msec, Delay: 502 * msec, Aim: 500 * msec},
		{Kind: "poison", For: 302 * msec, Aim: 300 * msec},
		{Kind: "broker-slow", For: 50 * msec, Delay: time.Second, N: 1}, // not aimed
	}
	want := Schedule{
		{Kind: "commit", N: 1},
		{Kind: "broker-slow", For: 498 * msec, Delay: 600 * msec, Aim: 500 * msec, N: 3},
		{Kind: "slow-payment", For: 900 * msec, Delay: 600 * msec, Aim: 500 * msec},
		{Kind: "poison", For: 360 * msec, Aim: 300 * msec},
		{Kind: "broker-slow", For: 50 * msec, Delay: time.Second, N: 1},
	}
	if got := widen(s); !slices.Equal(got, want) {
		t.Errorf("widen:\n got %v\nwant %v", got, want)
	}
	if s[1].Delay != 502*msec {
		t.Error("widen changed its argument")
	}
	if got := widen(Schedule{{Kind: "commit", N: 1}, {Kind: "broker-slow", For: 50 * msec, Delay: 700 * msec, Aim: 500 * msec}}); got != nil {
		t.Errorf("nothing close to a deadline, yet widened: %v", got)
	}
}
