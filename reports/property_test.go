package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/outboxcheck/outboxcheck/harness"
)

// loopRecords are a loop run's records: relay-isolation never probed,
// backoff not declared, the rest judged.
func loopRecords() []harness.PropertyRecord {
	return []harness.PropertyRecord{
		{Name: "effect-at-most-once", Kind: "safety", Checked: "after every step and at the end", Judged: 136, Unit: "steps"},
		{Name: "backoff", Kind: "safety", Checked: "at the end, after the drain", Unit: "retries", NotApplicable: "no backoff declared"},
		{Name: "no-loss", Kind: "liveness", Checked: "at the end, after the drain", Judged: 1, Unit: "end states"},
		{Name: "relay-isolation", Kind: "liveness", Checked: "per probe", Unit: "probes", NotJudged: "no wedge caught a relay"},
	}
}

// A property judged zero times is "not judged", with why, in every page:
// never "held". Each says when its check runs and how often it was judged.
func TestNeverJudgedIsNotHeld(t *testing.T) {
	var r Report
	r.Fill(harness.Summary{Checks: 10, Properties: loopRecords()})
	got := map[string]Property{}
	for _, p := range r.Properties {
		got[p.Name] = p
	}
	iso := got["relay-isolation"]
	if iso.Verdict != NotJudged || iso.Detail != "no wedge caught a relay" || iso.JudgedText() != "0 probes" {
		t.Fatalf("relay-isolation: %+v", iso)
	}
	if p := got["no-loss"]; p.Verdict != Held || p.JudgedText() != "1 end state" || p.When() != "at the end, after the drain" {
		t.Fatalf("no-loss: %+v", p)
	}
	if p := got["backoff"]; p.Verdict != NotApplicable {
		t.Fatalf("backoff: %+v", p)
	}
	var md bytes.Buffer
	if err := r.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| `relay-isolation` | per probe | 0 probes | **not judged**: no wedge caught a relay |",
		"| `effect-at-most-once` | after every step and at the end | 136 steps | held |",
		"| `no-loss` | at the end, after the drain | 1 end state | held |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md.String())
		}
	}
	page := html(t, &r)
	for _, want := range []string{`<td>per probe</td><td>0 probes</td><td class="not-judged">not judged: no wedge caught a relay</td>`,
		`<td>at the end, after the drain</td><td>1 end state</td><td class="held">held</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	var ju bytes.Buffer
	if err := r.JUnit(&ju); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ju.String(), `<skipped message="not judged: no wedge caught a relay">`) {
		t.Errorf("JUnit does not skip relay-isolation:\n%s", ju.String())
	}
}

// A shard that judged a property and held it outweighs one that never
// judged it; the counts add up.
func TestMergeJudgedHeldOverNotJudged(t *testing.T) {
	a, b := passSample(), passSample()
	a.Shard, b.Shard = "1/2", "2/2"
	one, none := 1, 0
	a.Properties = []Property{{Name: "relay-isolation", Verdict: NotJudged, Detail: "no wedge", Judged: &none, Unit: "probes"}}
	b.Properties = []Property{{Name: "relay-isolation", Verdict: Held, Judged: &one, Unit: "probes"}}
	m, err := Merge([]*Report{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if p := m.Properties[0]; p.Verdict != Held || p.JudgedText() != "1 probe" {
		t.Fatalf("merged: %+v", p)
	}
}
