package loopcheck

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
)

// The coverage lists every kind of fault the nemesis has, per place:
// network faults per link, kills and stops per dispatcher, broker
// faults, holds, consumer faults, zones; a kind never drawn is a row of
// zeros, and a place where a kind was put on but never took effect is
// marked, as the step contract marks "injected but never struck".
func TestCoverageListsEveryKind(t *testing.T) {
	var tl tally
	tl.injected("kill", "dispatcher-0", true, 0)
	tl.injected("kill", "dispatcher-1", false, 0) // it was not running
	tl.injected("wedge", noRelay, false, 0)
	tl.injected("wedge", "dispatcher-1", true, 1)
	tl.injected("timezone", "Asia/Tokyo", true, 0)
	now := time.Now()
	tl.spells([]spell{{kind: "broker-down", from: now, until: now.Add(time.Second), hits: 4}, {kind: "broker-down"},
		{kind: "poison", pay: "pay-3", hits: 2}, {kind: "broker-slow"}})
	net := map[string]faults.Coverage{"producer": {faults.Blackhole: {Injected: 2, Struck: 2, Affected: 5}},
		"dispatcher-1": {faults.Sever: {Injected: 1, Struck: 0}}}
	rows := tl.coverage(net)
	got := map[string]harness.FaultCount{}
	kinds := map[string]bool{}
	for _, f := range rows {
		got[f.Kind+"@"+f.Where] = f
		kinds[f.Kind] = true
		if f.Note == "" {
			t.Errorf("%s on %q says nothing of what it counts", f.Kind, f.Where)
		}
	}
	for _, k := range nemesisKinds {
		if !kinds[k.kind] {
			t.Errorf("kind %s missing from the coverage", k.kind)
		}
	}
	want := map[string]string{
		"blackhole@producer": "2 2 5 false", "sever@dispatcher-1": "1 0 0 true", "reset@": "0 0 0 false",
		"kill@dispatcher-0": "1 1 0 false", "kill@dispatcher-1": "1 0 0 true",
		"wedge@" + noRelay: "1 0 0 true", "wedge@dispatcher-1": "1 1 1 false",
		"broker-down@broker": "2 1 4 false", "poison@broker": "1 1 2 false", "broker-slow@broker": "1 0 0 true",
		"ack-lost@": "0 0 0 false", "hold-tx@": "0 0 0 false", "crash-consumer@": "0 0 0 false",
		"timezone@Asia/Tokyo": "1 1 0 false", "timezone@Pacific/Kiritimati": "0 0 0 false",
	}
	for k, w := range want {
		f, ok := got[k]
		if s := fmt.Sprint(f.Injected, f.Struck, f.Affected, f.NeverStruck()); !ok || s != w {
			t.Errorf("%s: %q (listed %v), want %q", k, s, ok, w)
		}
	}
	if _, ok := got["timezone@UTC"]; ok {
		t.Error("UTC is listed as a fault")
	}
	drawn, never, idle := coverageWords(rows)
	if s := fmt.Sprint(drawn, never, idle); !strings.Contains(s, "kill 2/1") || !strings.Contains(s, "[reset latency lost-reply stop stop-mid-batch strand broker-link window-outage crash-db hold-tx ack-lost slow-payment freeze crash-loop head-of-line redeliver crash-consumer schema-change cold]") ||
		!strings.Contains(s, "[sever on dispatcher-1 kill on dispatcher-1 wedge on "+noRelay+" broker-slow on broker]") {
		t.Errorf("coverage words: %s", s)
	}
}
