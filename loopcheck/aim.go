package loopcheck

import (
	"fmt"
	"slices"
	"time"

	"pgregory.net/rapid"
)

// Deadliner is a Subject that declares its own deadlines besides
// Env.Lease: an ack deadline or visibility timeout, a publish or call
// timeout. The nemesis aims at each of them, and at the lease, as the
// step contract's clock aims at lease edges: a slow broker acknowledges
// a few ms before or after one, and a payment's publishes are refused or
// acknowledged late for a small multiple of one. A bug that shows only
// when a delay meets a deadline (a batch whose ack timed out marked done)
// is then found by design, not when a drawn delay happens to match.
type Deadliner interface {
	Deadlines() []time.Duration
}

// aimOffsets are how far from a deadline an aimed delay lands: just past
// it first (what shrinking goes to), just short of it, then further.
var aimOffsets = []time.Duration{2 * time.Millisecond, -2 * time.Millisecond, 10 * time.Millisecond, -10 * time.Millisecond}

// aims are the deadlines the nemesis aims at: the lease and those the
// subject declares, shortest first, each once.
func (r *runner) aims() []time.Duration {
	out := []time.Duration{r.opts.Lease}
	if d, ok := capability[Deadliner](r.subj); ok {
		for _, v := range d.Deadlines() {
			if v > 0 && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	slices.Sort(out)
	return out
}

// drawAimed draws one of aims, and a duration of 1 to upTo times it, a
// few ms either side.
func drawAimed(t *rapid.T, aims []time.Duration, upTo int, label string) (aim, d time.Duration) {
	aim = rapid.SampledFrom(aims).Draw(t, label+" aim")
	k := rapid.IntRange(1, upTo).Draw(t, label+" times")
	off := rapid.SampledFrom(aimOffsets).Draw(t, label+" offset")
	return aim, max(time.Duration(k)*aim+off, time.Millisecond)
}

// aimText is d, and how it stands to the deadline aim it was drawn at:
// "302ms (the 300ms deadline + 2ms)".
func aimText(d, aim time.Duration) string {
	if aim <= 0 {
		return d.String()
	}
	k := (d + aim/2) / aim
	off := d - k*aim
	what := "the " + aim.String() + " deadline"
	if k > 1 {
		what = fmt.Sprintf("%d × %s", k, what)
	}
	switch {
	case off > 0:
		return fmt.Sprintf("%v (%s + %v)", d, what, off)
	case off < 0:
		return fmt.Sprintf("%v (%s − %v)", d, what, -off)
	}
	return fmt.Sprintf("%v (%s)", d, what)
}
