package loopcheck

import (
	"slices"
	"time"
)

// shapes are, for the shrinker to try before any deletion, the failure's
// canonical shapes: short schedules that do not race the subject, so that
// a failure which needs only them becomes a story that replays every
// time:
//
//   - cold start: the relays down from the schedule's start, a commit, and
//     the drain starts them (cold.go: a relay that reads only what comes
//     after its own first start); tried for a no-loss failure;
//   - crashed mid-publish: a crash-loop step alone, its payment's every
//     publish killing the relay that makes it (a relay that had confirmed
//     or marked the event done before its publish never publishes it
//     again); tried for a no-loss failure, judged only for a subject that
//     shows its dead letters;
//   - poisoned for ever: a poison on the next payment, then its commit
//     (a relay that never gives up on an event), and crashed mid-publish
//     if the failing schedule had a crash-loop step (one that counts no
//     attempt its relay died in); tried for a dead-letter failure;
//   - changed under the relays: a schema change, then a commit (a relay
//     that decodes against the columns it knew); tried when the failing
//     schedule changed the schema;
//   - frozen past its lease: let the relays settle, then the failing
//     schedule's first freeze (a stale relay that wakes and publishes on
//     a claim no longer its own); tried when the schedule had one;
//   - acknowledged past its lease: let the relays settle, then commit a
//     payment into a slow window whose acks come two leases late (its
//     relay's lease runs out while it waits, another relay takes the
//     event over and waits on its own late ack, and the first one's
//     completion comes while the second still holds the event); tried
//     for a fencing failure;
//   - an outage past the dedupe window: let the relays settle, then the
//     failing schedule's first window-outage, then settle again (a
//     resend the broker stores twice; it comes once the relay's claim
//     runs out after the heal, and the drain, finding the event
//     delivered, would judge before it); tried when the schedule had one;
//   - stopped mid-batch, by its own stop: let the relays settle, kill
//     every relay but one (two relays' claims may split the batch),
//     then the stop-mid-batch step (a Close that acks the rest of its
//     batch unsent); tried when the failing schedule had one;
//   - down while committed: let the relays settle, stop every relay, commit,
//     restart them (a relay that skips what was committed while it was
//     down, or loses what it held when it died); tried when the failing
//     schedule killed or stopped a relay;
//   - stopped mid-batch: let the relays settle, kill them all, commit three
//     payments into a slow broker window, restart one relay (it claims the
//     three in one batch and waits on its first late ack), stop it, restart
//     it (a stop or a timed-out ack that marks the rest of a batch done);
//     tried when the failing schedule stopped a relay, or killed one and
//     had the broker acknowledge late;
//   - a batch into a slow window: let the relays settle, commit three
//     payments in one transaction into a slow window as late as one of
//     the failing schedule's (a relay claims them as one batch, and its
//     first ack comes as late: a timed-out ack that marks the rest of a
//     batch done); tried when the failing schedule had a slow window,
//     first with every relay but one killed after the settle and a
//     pause that waits the late ack out (a lone relay: none takes the
//     rest of the batch over when its lease runs out mid-wait and
//     publishes it, which would hide the loss by luck; the drain
//     restarts them all), then with all of them.
func (sh *shrinker) shapes() []Schedule {
	var out []Schedule
	if sh.property == "no-loss" && !sh.best.cold() {
		out = append(out, sh.coldStart(), sh.crashedMidPublish())
	}
	if sh.property == "dead-letter" {
		out = append(out, append(sh.zoned(), Step{Kind: "poison", N: 1}, Step{Kind: "commit", N: 1}))
		if slices.ContainsFunc(sh.best, func(st Step) bool { return st.Kind == "crash-loop" }) {
			out = append(out, sh.crashedMidPublish())
		}
	}
	if sh.property == "fencing" && sh.lease > 0 && sh.dispatchers > 1 {
		slow := Step{Kind: "broker-slow", For: 2 * sh.lease, Delay: 2*sh.lease - 2*time.Millisecond, Aim: sh.lease, N: 1}
		out = append(out, append(sh.zoned(), sh.settle(), slow, Step{Kind: "pause", For: 3 * sh.lease}))
	}
	if slices.ContainsFunc(sh.best, func(st Step) bool { return st.Kind == "schema-change" }) {
		out = append(out, append(sh.zoned(), Step{Kind: "schema-change"}, Step{Kind: "commit", N: 1}))
	}
	if slices.ContainsFunc(sh.best, func(st Step) bool { return st.Kind == "stop-mid-batch" }) {
		out = append(out, sh.stoppedMidBatchByItsStop())
	}
	if i := slices.IndexFunc(sh.best, func(st Step) bool { return st.Kind == "freeze" }); i >= 0 {
		out = append(out, append(sh.zoned(), Step{Kind: "commit", N: 1}, sh.settle(), sh.best[i]))
	}
	if i := slices.IndexFunc(sh.best, func(st Step) bool { return st.Kind == "window-outage" }); i >= 0 {
		out = append(out, append(sh.zoned(), sh.settle(), sh.best[i], sh.settle()))
	}
	out = append(out, sh.slowBatches()...)
	if !slices.ContainsFunc(sh.best, func(st Step) bool { return st.Kind == "kill" || st.Kind == "stop" }) {
		return out
	}
	out = append(out, sh.downWhileCommitted())
	if s := sh.stoppedMidBatch(); s != nil {
		out = append(out, s)
	}
	return out
}

// maxSlowBatches caps the batch-into-a-slow-window shapes tried: one per
// distinct lateness of the failing schedule's slow windows, the first
// ones.
const maxSlowBatches = 3

// slowBatches are the batch-into-a-slow-window shapes, one per distinct
// lateness (and its aim) of the failing schedule's slow windows, in
// their order, in its time zone.
func (sh *shrinker) slowBatches() []Schedule {
	var out []Schedule
	seen := map[time.Duration]bool{}
	for _, st := range sh.best {
		if st.Kind != "broker-slow" || st.Delay <= 0 || seen[st.Delay] || len(out) == maxSlowBatches {
			continue
		}
		seen[st.Delay] = true
		slow := Step{Kind: "broker-slow", For: time.Second, Delay: st.Delay, Aim: st.Aim, N: 3}
		s := append(sh.zoned(), Step{Kind: "commit", N: 1}, sh.settle())
		if sh.dispatchers > 1 {
			lone := slices.Clone(s)
			for i := 1; i < sh.dispatchers; i++ {
				lone = append(lone, Step{Kind: "kill", N: i})
			}
			// Then wait the late ack out: the drain would restart the
			// killed relays at once, and one would take the batch over.
			wait := Step{Kind: "pause", For: slow.For + slow.Delay, Settle: true}
			out = append(out, append(lone, slow, wait))
		}
		out = append(out, append(s, slow))
	}
	return out
}

// zoned begins a shape: the failing schedule's time zone, if not UTC.
func (sh *shrinker) zoned() Schedule {
	if z := sh.best.zone(); z != "UTC" {
		return Schedule{{Kind: "timezone", Zone: z}}
	}
	return Schedule{}
}

// stoppedMidBatch is the stopped-mid-batch shape, with the failing
// schedule's first late ack (and what it was aimed at; else 500 ms) and
// time zone; nil when the schedule stopped no relay and had no late ack.
func (sh *shrinker) stoppedMidBatch() Schedule {
	late := Step{Delay: 500 * time.Millisecond}
	if i := slices.IndexFunc(sh.best, func(st Step) bool {
		return (st.Kind == "broker-slow" || st.Kind == "slow-payment") && st.Delay > 0
	}); i >= 0 {
		late = sh.best[i]
	} else if !slices.ContainsFunc(sh.best, func(st Step) bool { return st.Kind == "stop" }) {
		return nil
	}
	s := sh.allDown()
	window := max(late.Delay+time.Second, 2*time.Second)
	return append(s, Step{Kind: "broker-slow", For: window, Delay: late.Delay, Aim: late.Aim, N: 3},
		Step{Kind: "restart", N: 0}, Step{Kind: "pause", For: 100 * time.Millisecond},
		Step{Kind: "stop", N: 0}, Step{Kind: "restart", N: 0})
}

// stoppedMidBatchByItsStop is the stopped-mid-batch-by-its-own-stop
// shape, in the failing schedule's time zone.
func (sh *shrinker) stoppedMidBatchByItsStop() Schedule {
	s := append(sh.zoned(), Step{Kind: "commit", N: 1}, sh.settle())
	for i := 1; i < sh.dispatchers; i++ {
		s = append(s, Step{Kind: "kill", N: i})
	}
	return append(s, Step{Kind: "stop-mid-batch"})
}

// downWhileCommitted is the down-while-committed shape, in the failing
// schedule's time zone.
func (sh *shrinker) downWhileCommitted() Schedule {
	s := sh.allDown()
	s = append(s, Step{Kind: "commit", N: 1})
	for i := range sh.dispatchers {
		s = append(s, Step{Kind: "restart", N: i})
	}
	return s
}

// allDown begins both shapes: the failing schedule's time zone, a
// commit, a settle pause, and every relay killed.
func (sh *shrinker) allDown() Schedule {
	s := append(sh.zoned(), Step{Kind: "commit", N: 1}, sh.settle())
	for i := range sh.dispatchers {
		s = append(s, Step{Kind: "kill", N: i})
	}
	return s
}

// settle is a pause as long as the subject's declared recovery: after it,
// relays have started and what was committed before it has been handled.
func (sh *shrinker) settle() Step {
	return Step{Kind: "pause", For: sh.recovery, Settle: true}
}

// steadier lists s told without the races that a shrunk story often
// keeps, for Run to confirm beside it: its times aimed at a deadline
// moved further from it (widen), a settle pause before its first
// fault (settleFirst), a broker fault set before the commit it follows
// (aimEarly), that with each broker outage run to its end (outlast),
// a settle after a window outage (settledAfterOutage), and, for a
// duplicate publish, the story told into a slow window (slowFirst).
func (sh *shrinker) steadier(s Schedule) []Schedule {
	var out []Schedule
	aimed := aimEarly(s)
	if aimed == nil {
		aimed = s
	}
	for _, v := range []Schedule{widen(s), sh.settleFirst(s), aimEarly(s), outlast(aimed), sh.settledAfterOutage(s), sh.slowFirst(s)} {
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

// slowFirst is s begun with a slow-broker window of 3 s whose acks come
// 100 ms late (within any publish deadline, so nothing is ambiguous),
// three payments committed into it, and a pause as long, for a publish-at-most-once failure:
// a relay whose claim does not hold through its publish then stays
// mid-publish long enough for another to take the same event, every
// time, not only when two polls meet. Nil for other properties, or when
// s already has a slow window.
func (sh *shrinker) slowFirst(s Schedule) Schedule {
	if sh.property != "publish-at-most-once" || slices.ContainsFunc(s, func(st Step) bool { return st.Kind == "broker-slow" }) {
		return nil
	}
	out := append(Schedule{{Kind: "broker-slow", For: 3 * time.Second, Delay: 100 * time.Millisecond, N: 3}}, s...)
	return append(out, Step{Kind: "pause", For: 3 * time.Second}) // the drain would end the window at once
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

// settledAfterOutage is s ended by a settle pause when it has a window
// outage: a relay resends the event whose ack the outage lost only once
// its claim runs out after the heal, and without the pause the drain,
// finding the event delivered, may judge before the resend (a story that
// came back 8 of 10). Nil when s has none, or already ends settling.
func (sh *shrinker) settledAfterOutage(s Schedule) Schedule {
	if !slices.ContainsFunc(s, func(st Step) bool { return st.Kind == "window-outage" }) || len(s) > 0 && s[len(s)-1].Settle {
		return nil
	}
	return append(slices.Clone(s), sh.settle())
}

// settleFirst is s with a settle pause before its first fault: a story
// whose fault raced the relays' start, made into one that does not.
// Nil when s has no fault, or already settles before it.
func (sh *shrinker) settleFirst(s Schedule) Schedule {
	for i, st := range s {
		switch st.Kind {
		case "commit", "rollback", "timezone", "cold":
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

// crashedMidPublish is the crashed-mid-publish shape: the failing
// schedule's time zone and a crash-loop step (crashloop.go).
func (sh *shrinker) crashedMidPublish() Schedule {
	return append(sh.zoned(), Step{Kind: "crash-loop"})
}
