package loopcheck

import (
	"slices"
	"time"
)

// shapes are, for the shrinker to try before any deletion, the failure's
// canonical shapes: short schedules that do not race the subject, so that
// a failure which needs only them becomes a story that replays every
// time. Today one:
//
//   - down while committed: let the relays settle, stop every relay, commit,
//     restart them (a relay that skips what was committed while it was
//     down, or loses what it held when it died); tried when the failing
//     schedule killed or stopped a relay.
func (sh *shrinker) shapes() []Schedule {
	if !slices.ContainsFunc(sh.best, func(st Step) bool { return st.Kind == "kill" || st.Kind == "stop" }) {
		return nil
	}
	return []Schedule{sh.downWhileCommitted()}
}

// downWhileCommitted is the down-while-committed shape, in the failing
// schedule's time zone.
func (sh *shrinker) downWhileCommitted() Schedule {
	s := Schedule{}
	if z := sh.best.zone(); z != "UTC" {
		s = append(s, Step{Kind: "timezone", Zone: z})
	}
	s = append(s, Step{Kind: "commit", N: 1}, sh.settle())
	for i := range sh.dispatchers {
		s = append(s, Step{Kind: "kill", N: i})
	}
	s = append(s, Step{Kind: "commit", N: 1})
	for i := range sh.dispatchers {
		s = append(s, Step{Kind: "restart", N: i})
	}
	return s
}

// settle is a pause as long as the subject's declared recovery: after it,
// relays have started and what was committed before it has been handled.
func (sh *shrinker) settle() Step {
	return Step{Kind: "pause", For: sh.recovery, Settle: true}
}

// steadier lists s told without the races that a shrunk story often
// keeps, for Run to confirm beside it: a settle pause before its first
// fault (settleFirst), a broker fault set before the commit it follows
// (aimEarly), and that with each broker outage run to its end
// (outlast).
func (sh *shrinker) steadier(s Schedule) []Schedule {
	var out []Schedule
	aimed := aimEarly(s)
	if aimed == nil {
		aimed = s
	}
	for _, v := range []Schedule{sh.settleFirst(s), aimEarly(s), outlast(aimed)} {
		if v != nil {
			out = append(out, v)
		}
	}
	return out
}

// aimEarly is s with each broker fault that directly follows a commit
// moved before it: a poison of "the last payment" as a poison of "the
// next payment", a broker outage as is. The same story, but no relay can
// publish the payments before the fault is on. Nil when s has no such
// pair.
func aimEarly(s Schedule) Schedule {
	var out Schedule
	for i := 1; i < len(s); i++ {
		if s[i-1].Kind != "commit" {
			continue
		}
		var early Step
		switch {
		case (s[i].Kind == "poison" || s[i].Kind == "slow-payment") && s[i].N == 0 && s[i-1].N == 1:
			early = s[i]
			early.N = 1
		case s[i].Kind == "broker-down":
			early = s[i]
		default:
			continue
		}
		if out == nil {
			out = slices.Clone(s)
		}
		out[i-1], out[i] = early, s[i-1]
	}
	return out
}

// outlast is s ended by a pause as long as its longest broker outage,
// so that the outages run their course rather than end when the steps
// are done and the harness heals everything. Nil when s has no outage.
func outlast(s Schedule) Schedule {
	longest := time.Duration(0)
	for _, st := range s {
		if st.Kind == "broker-down" {
			longest = max(longest, st.For)
		}
	}
	if longest == 0 || len(s) > 0 && s[len(s)-1].Settle {
		return nil
	}
	return append(slices.Clone(s), Step{Kind: "pause", For: longest, Settle: true})
}

// settleFirst is s with a settle pause before its first fault: a story
// whose fault raced the relays' start, made into one that does not.
// Nil when s has no fault, or already settles before it.
func (sh *shrinker) settleFirst(s Schedule) Schedule {
	for i, st := range s {
		switch st.Kind {
		case "commit", "rollback", "timezone":
			continue
		case "pause":
			if st.Settle {
				return nil
			}
			continue
		}
		return slices.Insert(slices.Clone(s), i, sh.settle())
	}
	return nil
}
