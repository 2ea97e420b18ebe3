package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/outboxcheck/outboxcheck/harness"
)

// loopNemesis is a loop run's coverage: some kinds struck, one injected
// on a link and never struck, some never drawn.
func loopNemesis() []harness.FaultCount {
	return []harness.FaultCount{
		{Kind: "blackhole", Where: "producer", Injected: 13, Struck: 13, Affected: 39, Note: "a short partition"},
		{Kind: "sever", Where: "dispatcher-0", Injected: 1, Struck: 1, Affected: 2, Note: "a long partition"},
		{Kind: "sever", Where: "dispatcher-1", Injected: 1, Note: "a long partition"},
		{Kind: "reset", Note: "reset"},
		{Kind: "kill", Where: "dispatcher-0", Injected: 2, Struck: 2, Note: "a relay killed"},
		{Kind: "broker-down", Where: "broker", Injected: 16, Struck: 12, Affected: 261, Note: "an outage; 9.465s down in all"},
		{Kind: "broker-slow", Where: "broker", Injected: 3, Struck: 1, Affected: 4, Note: "slow"},
		{Kind: "poison", Note: "poison"},
		{Kind: "timezone", Where: "Asia/Tokyo", Injected: 4, Struck: 4, Note: "the sessions' TimeZone"},
	}
}

// The coverage table lists every kind the run records, per place, with
// what it counts; the places a kind never struck and the kinds never
// drawn are called out, in report.md and report.html.
func TestCoverageCallsOutWhatNeverHappened(t *testing.T) {
	var r Report
	r.Fill(harness.Summary{Checks: 6, Nemesis: loopNemesis(), Properties: loopRecords()})
	if len(r.Coverage.Faults) != len(loopNemesis()) {
		t.Fatalf("%d coverage rows, want %d", len(r.Coverage.Faults), len(loopNemesis()))
	}
	var md bytes.Buffer
	if err := r.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| blackhole | producer | 13 | 13 | 39 | a short partition |",
		"| sever | dispatcher-1 **(never struck)** | 1 | 0 | 0 |  |",
		"| reset | — **(never drawn)** | 0 | 0 | 0 | reset |",
		"| broker-down | broker | 16 | 12 | 261 | an outage; 9.465s down in all |",
		"| timezone | Asia/Tokyo | 4 | 4 | 0 |",
		"**Injected but never struck**: sever on dispatcher-1.",
		"**Never drawn**: reset, poison.",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md.String())
		}
	}
	page := html(t, &r)
	for _, want := range []string{`<td>dispatcher-1 <span class="violated">(never struck)</span></td>`,
		`<td>— <span class="never">(never drawn)</span></td>`,
		`<span class="violated">Injected but never struck:</span> sever on dispatcher-1.`,
		`<span class="never">Never drawn:</span> reset, poison.`, `<td>broker-slow</td><td>broker</td><td>3</td><td>1</td><td>4</td>`,
		"· faults off", "<tr><th>faults</th><td>false; concurrent actors false</td></tr>"} { // the table is no run setting
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// Shards' coverage adds up per kind and place; a kind one shard never
// drew and another did keeps only the other's rows.
func TestMergeAddsFaultsPerPlace(t *testing.T) {
	a, b := passSample(), passSample()
	a.Shard, b.Shard = "1/2", "2/2"
	a.Coverage.Faults = []FaultCoverage{{Kind: "kill", Where: "dispatcher-0", Injected: 1, Struck: 1}, {Kind: "poison"}}
	b.Coverage.Faults = []FaultCoverage{{Kind: "kill", Where: "dispatcher-0", Injected: 2}, {Kind: "kill", Where: "dispatcher-1", Injected: 1, Struck: 1},
		{Kind: "poison", Where: "broker", Injected: 1, Struck: 1}}
	m, err := Merge([]*Report{a, b})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range m.Coverage.Faults {
		got = append(got, f.Kind+"@"+f.Where)
	}
	if s := strings.Join(got, " "); s != "kill@dispatcher-0 kill@dispatcher-1 poison@broker" || m.Coverage.Faults[0].Injected != 3 {
		t.Fatalf("merged %s: %+v", s, m.Coverage.Faults)
	}
}
