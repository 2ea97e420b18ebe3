package loopcheck

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestAimText(t *testing.T) {
	for _, c := range []struct {
		d, aim time.Duration
		want   string
	}{
		{302 * time.Millisecond, 300 * time.Millisecond, "302ms (the 300ms deadline + 2ms)"},
		{290 * time.Millisecond, 300 * time.Millisecond, "290ms (the 300ms deadline − 10ms)"},
		{90*time.Second - 2*time.Millisecond, 30 * time.Second, "1m29.998s (3 × the 30s deadline − 2ms)"},
		{time.Second, 0, "1s"},
	} {
		if got := aimText(c.d, c.aim); got != c.want {
			t.Errorf("aimText(%v, %v) = %q, want %q", c.d, c.aim, got, c.want)
		}
	}
}

// Every aimed duration lands a few ms from a small multiple of a
// declared deadline, and every deadline is drawn: a 30 s ack deadline is
// reached as surely as the lease.
func TestAimedDrawsHitEveryDeadline(t *testing.T) {
	aims := []time.Duration{300 * time.Millisecond, 2 * time.Second, 30 * time.Second}
	hit := map[time.Duration]bool{}
	rapid.Check(t, func(t *rapid.T) {
		aim, d := drawAimed(t, aims, 3, "x")
		hit[aim] = true
		k := (d + aim/2) / aim
		if off := d - k*aim; k < 1 || k > 3 || off < -10*time.Millisecond || off > 10*time.Millisecond {
			t.Fatalf("%v is not within 10ms of 1 to 3 × %v", d, aim)
		}
	})
	for _, a := range aims {
		if !hit[a] {
			t.Errorf("the %v deadline was never aimed at", a)
		}
	}
}

// A publish the broker accepts of an event it already had is a
// duplicate; refusals and a killed relay's attempts are not. Refusals
// (an outage's, a poison's) and lost acks (the harness's, the wire's)
// are counted for the report.
func TestDuplicatePublishesAreCounted(t *testing.T) {
	var tl tally
	tl.attempts([]Attempt{{EventID: "e1", Outcome: "accepted"}, {EventID: "e1", Outcome: "ack-lost"}, {EventID: "e1", Outcome: "accepted-late"},
		{EventID: "e2", Outcome: "poison"}, {EventID: "e2", Outcome: "accepted"}, {EventID: "e2", Outcome: "dead"}, {EventID: "e3", Outcome: "down"},
		{EventID: "e3", Outcome: "no-reply"}})
	if tl.duplicates != 2 || tl.refused != 2 || tl.ackLost != 2 {
		t.Fatalf("duplicates %d, refused %d, acks lost %d; want 2, 2, 2", tl.duplicates, tl.refused, tl.ackLost)
	}
}
