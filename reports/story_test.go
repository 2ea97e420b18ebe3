package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outboxcheck/outboxcheck/harness"
)

// loopSample is a loop failure: a schedule of 3 steps whose second
// committed two payments, then the drain (step 0), on real time.
func loopSample() *Report {
	r := sample()
	r.Checks, r.Steps, r.ShrinkRuns = 1, 3, 0
	r.Failure = &Counterexample{Property: "no-loss", Message: "1 lost", FirstCheck: 1, Steps: []Step{
		{N: 1, Clock: "00:00:00.010000", Action: "TimeZone", Actor: "operator", Input: "Asia/Tokyo"},
		{N: 2, Clock: "00:00:00.100000", Action: "Commit", Actor: "producer", Input: "pay-1", Result: "ok"},
		{N: 2, Clock: "00:00:00.150000", Action: "Commit", Actor: "producer", Input: "pay-2", Result: "ok"},
		{N: 3, Clock: "00:00:00.300000", Action: "BrokerDown", Actor: "broker", Input: "for 500ms"},
		{N: 0, Clock: "00:00:00.900000", Action: "Drain", Actor: "operator", Input: "heal every link", Expect: "[no-loss] 1 lost"},
	}}
	return r
}

// A loop counterexample counts its schedule's steps, not its entries:
// one count in the heading, the story's numbers and the summary; the
// drain reads "end".
func TestOneStepCount(t *testing.T) {
	r := loopSample()
	if n := r.Failure.StepCount(); n != 3 {
		t.Fatalf("step count %d, want 3 (5 entries)", n)
	}
	var md bytes.Buffer
	if err := r.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| checks | 1 (+0 replayed while shrinking), 3 steps,", "## Counterexample (3 steps, first failed at check 1)",
		"| 2 | 00:00:00.150000 | Commit |", "| end | 00:00:00.900000 | Drain |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md.String())
		}
	}
	page := html(t, r)
	for _, want := range []string{"<h2>Counterexample: 3 steps, first failed at check 1</h2>", "3 steps in 3.5 s", "<tr class=\"failing\" id=\"failing-row\"><td>end</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if s := story(r.Failure); !strings.Contains(s, "end  00:00:00.900000  Drain") {
		t.Errorf("JUnit story: %s", s)
	}
	// A loop failure is run again, not replayed step by step.
	r.Contract = LoopContract
	md.Reset()
	if err := r.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if s := md.String(); !strings.Contains(s, "replay <this directory> --times N") || strings.Contains(s, "step by step") {
		t.Errorf("a loop report.md does not say how to run its schedule again:\n%s", s)
	}
}

// The failing end state goes into report.json in full, as a field of the
// counterexample; the pages count it and point there (markdown) or fold
// it (html), while the message only summarises.
func TestPaymentsInTheCounterexample(t *testing.T) {
	var r Report
	h := &harness.History{Entries: []harness.Entry{{Step: 0, Action: "Drain", Actor: "operator"}}}
	r.Fill(harness.Summary{Failure: &harness.Failure{Property: "no-loss", Message: "2 of 3 committed payments lost", History: h},
		Outcomes: []harness.PaymentOutcome{{Payment: "pay-1", Outcome: "delivered"}, {Payment: "pay-2", Outcome: "lost", Why: "never accepted"},
			{Payment: "pay-10", Outcome: "lost", Why: "never accepted"}}})
	dir := t.TempDir()
	if err := Write(dir, &r); err != nil {
		t.Fatal(err)
	}
	back, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p := back.Failure.Payments; len(p) != 3 || p[2] != (PaymentOutcome{Payment: "pay-10", Outcome: "lost", Why: "never accepted"}) {
		t.Fatalf("report.json payments: %+v", p)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.Contains(string(md), "(1 delivered, 2 lost) is in report.json, `counterexample.payments`") {
		t.Errorf("report.md:\n%s", md)
	}
	if page := html(t, &r); !strings.Contains(page, `<tr class="lost"><td class="mono">pay-10</td><td>lost</td><td>never accepted</td></tr>`) {
		t.Error("report.html does not list the payments")
	}
}
