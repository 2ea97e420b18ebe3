package reports

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
)

func html(t *testing.T, r *Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.HTML(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func classes(tl timeline) map[string]int {
	n := map[string]int{}
	for _, s := range tl.Shapes {
		n[s.Class]++
	}
	return n
}

// A counterexample whose harness clock stands still is laid out by step,
// one whose clock moves at every step by elapsed time.
func TestAxisIsTheStepIndexWhenTheClockStandsStill(t *testing.T) {
	still := stillSample()
	if a := newAxis(still.Failure.Steps); a.Kind != "step" {
		t.Fatalf("still clock: axis %q", a.Kind)
	}
	if page := html(t, still); !strings.Contains(page, "x axis: step") {
		t.Fatal("the page does not say its axis is the step")
	}
	moving := stillSample()
	for i := range moving.Failure.Steps {
		moving.Failure.Steps[i].Clock = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i*i) * 100 * time.Millisecond).Format("15:04:05.000000")
	}
	a := newAxis(moving.Failure.Steps)
	if a.Kind != "time" || !strings.Contains(html(t, moving), "x axis: elapsed time") {
		t.Fatalf("moving clock: axis %q", a.Kind)
	}
	for i := 1; i < len(a.Cols); i++ {
		if a.Cols[i].X-a.Cols[i-1].X < minGap {
			t.Fatalf("steps %d and %d overlap", i, i+1)
		}
	}
	if last, first := a.Cols[len(a.Cols)-1].X-a.Cols[len(a.Cols)-2].X, a.Cols[1].X-a.Cols[0].X; last <= first {
		t.Fatalf("x is not elapsed time: first gap %d, last gap %d", first, last)
	}
}

// Runs of no-op steps fold into one row (a <details>) and one narrow
// column; single no-ops and the failing step do not.
func TestNoopRunsAreFolded(t *testing.T) {
	steps := stillSample().Failure.Steps
	var folds []run
	for _, r := range runs(steps) {
		if r.Fold {
			folds = append(folds, r)
		}
	}
	if len(folds) != 2 || folds[0] != (run{1, 3, true}) || folds[1] != (run{7, 8, true}) {
		t.Fatalf("folds %+v", folds)
	}
	page := html(t, stillSample())
	for _, want := range []string{"<summary>3 no-op steps (2–4)</summary>", "<summary>2 no-op steps (8–9)</summary>", "5 no-op steps folded"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	long := longSample().Failure.Steps
	if rs := runs(long); len(rs) > len(long)/2 || rs[len(rs)-1].Fold {
		t.Fatalf("a 90-step story of no-ops has %d rows, the last folded: %v", len(rs), rs[len(rs)-1].Fold)
	}
}

// Labels are words: no key with underscores (or CamelCase actions) in
// the page's own text; data (messages, inputs, results) stays as it is.
func TestLabelsAreWords(t *testing.T) {
	if got := words("consumer_reached"); got != "consumer reached" {
		t.Fatalf("words(consumer_reached) = %q", got)
	}
	if got := words("MarkPublished"); got != "mark published" {
		t.Fatalf("words(MarkPublished) = %q", got)
	}
	data := regexp.MustCompile(`(?s)<title>.*?</title>|<code>.*?</code>|<td class="mono[^"]*">.*?</td>|<p class="message">.*?</p>|<style>.*?</style>|<script>.*?</script>|<[^>]*>`)
	for name, r := range map[string]*Report{"pass": passSample(), "fault-free": stillSample(), "faulted": longSample()} {
		text := data.ReplaceAllString(html(t, r), " ")
		if m := regexp.MustCompile(`\S*_\S*|\b[A-Z][a-z]+[A-Z][a-z]+\b`).FindString(text); m != "" {
			t.Errorf("%s page shows the key %q", name, m)
		}
	}
}

// Every step's mark is coloured by its call's outcome; the event lanes
// show each event's status, split where the model and the database part;
// the broker's log and the faults have lanes of their own.
func TestTimelineLanes(t *testing.T) {
	tl := newTimeline(stillSample().Failure.Steps)
	n := classes(tl)
	for _, c := range []string{"step ok", "step failed", "step unknown", "step noop", "step ok failing",
		"st pending", "st publishing", "st unknown", "st publishing model", "st published db", "pub ok", "delivery ok"} {
		if n[c] == 0 {
			t.Errorf("no %q in the timeline: %v", c, n)
		}
	}
	var labels []string
	for _, l := range tl.Labels {
		labels = append(labels, l.Text)
	}
	for _, want := range []string{"faults", "actors", "broker", "events", "event …01 · pay-1", "event …04 · pay-2"} {
		if !strings.Contains(strings.Join(labels, "\n"), want) {
			t.Errorf("no lane %q in %q", want, labels)
		}
	}
	f := classes(newTimeline(sample().Failure.Steps))
	if f["win fault"] != 1 || f["win down"] != 1 || f["step none"] == 0 || f["step ok failing"]+f["step none failing"] != 1 {
		t.Errorf("faulted sample: %v", f)
	}
}

// A report.json from before outcomes, statuses and the broker's log were
// recorded still reads and renders: error results count as failed.
func TestOldReportsRender(t *testing.T) {
	old := `{"n":1,"clock":"00:00:00.000000","action":"Publish","actor":"dispatcher-0","input":"e1","result":"error: refused"}`
	var s Step
	if err := json.Unmarshal([]byte(old), &s); err != nil {
		t.Fatal(err)
	}
	if outcomeClass(s) != "failed" {
		t.Fatalf("outcome %q", outcomeClass(s))
	}
	r := sample()
	r.Failure.Steps = []Step{s}
	if page := html(t, r); !strings.Contains(page, `class="step failed failing"`) {
		t.Fatal("an old step is not drawn")
	}
	j, _ := json.Marshal(Step{N: 1})
	if strings.Contains(string(j), "outcome") || strings.Contains(string(j), "rows") {
		t.Fatalf("new fields are not omitted when empty: %s", j)
	}
}

// Ids from a deterministic generator lose their shared prefix, and keep
// two characters at least, even when there is only one.
func TestShortIDs(t *testing.T) {
	one := newShortener(longSample().Failure.Steps)
	if got := one.id("00000000-0000-4000-8000-000000000001"); got != "…01" {
		t.Fatalf("one id: %q", got)
	}
	if got := newShortener(stillSample().Failure.Steps).text("claimed [00000000-0000-4000-8000-000000000004]"); got != "claimed […04]" {
		t.Fatalf("two ids: %q", got)
	}
}

// A short story whose clock moves (a subject error's, cut at its first
// failure) fills the width: its time labels do not run into each other.
func TestShortStoryOnATimeAxisFillsTheWidth(t *testing.T) {
	steps := []Step{
		{N: 1, Clock: "00:00:00.000000", Action: "AdvanceClock", Actor: "operator", Input: "+1m0s"},
		{N: 2, Clock: "00:01:00.000000", Action: "AdvanceClock", Actor: "operator", Input: "+46.199s"},
		{N: 3, Clock: "00:01:46.199000", Action: "Commit", Actor: "producer", Input: "pay-1", Result: "error: boom", Outcome: "failed"},
	}
	a := newAxis(steps)
	if a.Kind != "time" || a.Width < minPlotW-colW {
		t.Fatalf("axis %q, %d wide", a.Kind, a.Width)
	}
	for i := 1; i < len(a.Ticks); i++ {
		if gap := a.Ticks[i].X - a.Ticks[i-1].X; gap < 50 {
			t.Fatalf("ticks %q and %q are %d px apart", a.Ticks[i-1].Label, a.Ticks[i].Label, gap)
		}
	}
}
