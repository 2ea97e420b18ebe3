package reports

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// faultedLoopSample is a loop story with a partition, a wedge that severs
// a relay's link, a kill, a broker outage that ends on its own, a slow
// window, a poison, a held transaction and a time zone, then the drain.
func faultedLoopSample() []Step {
	steps := []Step{
		{N: 1, Action: "TimeZone", Actor: "operator", Input: "Asia/Tokyo"},
		{N: 2, Action: "Commit", Actor: "producer", Input: "pay-1", Result: "ok"},
		{N: 3, Action: "Partition", Actor: "producer", Input: "blackhole after 0 requests"},
		{N: 4, Action: "BrokerDown", Actor: "broker", Input: "for 542ms"},
		{N: 5, Action: "Wedge", Actor: "dispatcher-1", Input: "dispatcher-1#1, publishing e1 of pay-1", Result: "link severed mid-publish"},
		{N: 5, Action: "BrokerUp", Actor: "broker", Input: "the outage is over (542ms)"},
		{N: 6, Action: "BrokerSlow", Actor: "broker", Input: "for 131ms"},
		{N: 7, Action: "Poison", Actor: "broker", Input: "pay-3 for ever"},
		{N: 8, Action: "HoldTransaction", Actor: "operator", Input: "for 1s", Result: "holding 4 tables"},
		{N: 9, Action: "CrashDispatcher", Actor: "dispatcher-0", Input: "dispatcher-0#1", Result: "publisher revoked"},
		{N: 10, Action: "CrashDispatcher", Actor: "dispatcher-0", Result: "skipped: not running (nothing to kill)"},
		{N: 0, Action: "Drain", Actor: "operator", Input: "heal every link", Expect: "[no-loss] 1 lost"},
	}
	for i := range steps {
		steps[i].Clock = fmt.Sprintf("00:00:00.%06d", (i+1)*50000)
	}
	return steps
}

// Every lane of a loop timeline has a name of its own (the broker as an
// actor, its faults and the links' no longer share "broker" or an
// actor's name), and a story without publishes draws no empty broker log.
func TestLaneNamesAreUnique(t *testing.T) {
	for name, steps := range map[string][]Step{"loop": faultedLoopSample(), "step": sample().Failure.Steps, "still": stillSample().Failure.Steps} {
		tl := newTimeline(steps)
		var lanes []string
		for _, l := range tl.Labels {
			if l.Class != "section" {
				lanes = append(lanes, l.Text)
			}
		}
		sorted := slices.Clone(lanes)
		slices.Sort(sorted)
		if len(slices.Compact(sorted)) != len(lanes) {
			t.Errorf("%s: lane names repeat: %q", name, lanes)
		}
		if name == "loop" && (slices.Contains(lanes, "broker log") || tl.Broker) {
			t.Errorf("loop: a broker log lane without a publish: %q", lanes)
		}
		if name == "still" && !slices.Contains(lanes, "broker log") {
			t.Errorf("still: no broker log: %q", lanes)
		}
	}
	if got := (&builder{t: &timeline{}}); got.lane("x", "", 1) >= 0 && got.lane("x", "", 1) >= 0 {
		if got.t.Labels[1].Text != "x (2)" {
			t.Errorf("a repeated name reads %q", got.t.Labels[1].Text)
		}
	}
}

// The faults track shows what the loop's nemesis did: the partition and
// the wedge's severed link until the drain, the broker's outage until it
// ended, its slow window, the poison, the held transaction, the killed
// relay, the time zone; a skipped kill shows nothing.
func TestFaultsTrackShowsBrokerWindowsAndSeveredLinks(t *testing.T) {
	steps := faultedLoopSample()
	for k, w := range map[string][2]int{
		"producer: blackhole after 0 requests": {2, 11}, "dispatcher-1: severed mid-publish (wedge)": {4, 11},
		"broker: down": {3, 5}, "broker slow: slow: acknowledgements late": {6, 11}, "broker: poison": {7, 7},
		"database: transaction held": {8, 11}, "dispatcher-0: down": {9, 11}, "time zone: sessions in Asia/Tokyo": {0, 12},
	} {
		if !slices.ContainsFunc(spans(steps), func(s span) bool { return s.Row+": "+s.What == k && s.From == w[0] && s.To == w[1] }) {
			t.Errorf("no window %s from step index %d to %d: %+v", k, w[0], w[1], spans(steps))
		}
	}
	if n := len(spans(steps)); n != 8 {
		t.Errorf("%d windows, want 8 (the skipped kill opens none): %v", n, spans(steps))
	}
	tl := newTimeline(steps)
	var lanes []string
	for _, l := range tl.Labels {
		lanes = append(lanes, l.Text)
	}
	for _, want := range []string{"producer link", "dispatcher-1 link", "broker faults", "broker slow", "database", "time zone", "broker"} {
		if !slices.Contains(lanes, want) {
			t.Errorf("no lane %q in %q", want, lanes)
		}
	}
}

// Ticks of a time axis 200 ms apart past a second read apart.
func TestElapsedTicksReadApart(t *testing.T) {
	for d, want := range map[time.Duration]string{1000 * time.Millisecond: "1s", 1200 * time.Millisecond: "1.2s",
		250 * time.Millisecond: "250ms", 12 * time.Second: "12s"} {
		if got := elapsed(d); got != want {
			t.Errorf("elapsed(%v) = %q, want %q", d, got, want)
		}
	}
}

// The loop's own faults are on the track too: a cold start until the
// drain, a crash loop and the relays it crashed, a schema change; a
// strand the operator records caught no relay, and marks nothing. A
// newcomer read "no fault or crash in this counterexample" under a
// story that was a crash loop.
func TestFaultsTrackShowsTheLoopsOwnFaults(t *testing.T) {
	steps := []Step{
		{Action: "Cold", Actor: "operator", Input: "every relay"},
		{Action: "Commit", Actor: "producer", Input: "pay-1", Result: "ok"},
		{Action: "CrashLoop", Actor: "broker", Input: "pay-2: every publish of its event crashes the relay publishing it"},
		{Action: "Crashed", Actor: "dispatcher-0", Input: "dispatcher-0#1, publishing e of pay-2"},
		{Action: "Strand", Actor: "operator", Result: "no relay published within 1s: nothing stranded"},
		{Action: "SchemaChange", Actor: "operator", Input: "change 1", Result: "not made: boom"},
		{Action: "SchemaChange", Actor: "operator", Input: "change 1", Result: "the outbox table changed shape while the relays ran"},
		{Action: "Drain", Actor: "operator"},
	}
	got := spans(steps)
	for k, w := range map[string][2]int{
		"dispatchers: cold start: not started with the schedule": {0, 7},
		"broker: crash loop: its publishes crash the relay":      {2, 2},
		"dispatcher-0: crashed publishing":                       {3, 7},
		"database: schema changed":                               {6, 6},
	} {
		if !slices.ContainsFunc(got, func(s span) bool { return s.Row+": "+s.What == k && s.From == w[0] && s.To == w[1] }) {
			t.Errorf("no window %s from step index %d to %d: %+v", k, w[0], w[1], got)
		}
	}
	if len(got) != 4 {
		t.Errorf("%d windows, want 4 (a strand that caught nothing and a change not made mark none): %+v", len(got), got)
	}
}
