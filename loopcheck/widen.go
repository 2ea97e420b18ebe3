package loopcheck

import (
	"slices"
	"time"
)

// widen is s with each time it aimed a few milliseconds either side of a
// subject's deadline moved further to the same side, a fifth of that
// deadline (20 ms to 250 ms): an ack 502 ms late against a 500 ms
// deadline becomes 600 ms late. A story that needs only "past the deadline" then replays
// on a loaded machine too, where a relay woken 2 ms late sees the ack
// and the deadline both ready and picks either. Nil when s aims at no
// deadline that closely.
//
// The aimed times: a slow broker's delay, a slow payment's delay and how
// long it lasts, how long a timed poison lasts, and a freeze.
func widen(s Schedule) Schedule {
	var out Schedule
	for i, st := range s {
		if st.Aim <= 0 {
			continue
		}
		w := st
		switch st.Kind {
		case "broker-slow":
			w.Delay = widened(st.Delay, st.Aim)
		case "slow-payment":
			w.Delay, w.For = widened(st.Delay, st.Aim), widened(st.For, st.Aim)
		case "poison", "freeze":
			w.For = widened(st.For, st.Aim)
		}
		if w == st {
			continue
		}
		if out == nil {
			out = slices.Clone(s)
		}
		out[i] = w
	}
	return out
}

// widened is d moved away from the nearest multiple of aim, on its own
// side, to widenMargin(aim) from it, if d lies closer than that; d
// itself otherwise, or if d is a multiple.
func widened(d, aim time.Duration) time.Duration {
	k := (d + aim/2) / aim
	if k < 1 {
		return d
	}
	off, margin := d-k*aim, min(max(aim/5, 20*time.Millisecond), 250*time.Millisecond)
	switch {
	case off > 0 && off < margin:
		return k*aim + margin
	case off < 0 && -off < margin && k*aim-margin > 0:
		return k*aim - margin
	}
	return d
}
