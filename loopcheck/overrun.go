package loopcheck

import (
	"slices"
	"time"
)

// maxWindowOverrun is the most a window-outage step lasts past the dedupe
// window (it draws 100 ms to this).
const maxWindowOverrun = time.Second

// overrun is s with each window outage run to its longest past the
// dedupe window: a resend right at the heal of an outage 140 ms past the
// window may still find its first copy's id in the stream's dedupe
// table, which the server purges on its own timer; a second past, it
// does not. Nil when s has no window outage shorter than that.
func overrun(s Schedule) Schedule {
	var out Schedule
	for i, st := range s {
		if st.Kind != "window-outage" || st.For >= maxWindowOverrun {
			continue
		}
		if out == nil {
			out = slices.Clone(s)
		}
		out[i].For = maxWindowOverrun
	}
	return out
}
