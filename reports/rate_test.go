package reports

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

// The intervals keep every step and fault of the checks: spread over
// time, none is lost or counted twice, and the rate is steps over time.
func TestIntervalsKeepEveryStepAndFault(t *testing.T) {
	ps := progressSample().Progress
	ivs, width := intervals(ps)
	if width <= 0 || len(ivs) < 8 || len(ivs) > 60 {
		t.Fatalf("%d intervals of %v", len(ivs), width)
	}
	var steps, faults, struck float64
	for _, iv := range ivs {
		steps, faults, struck = steps+iv.Steps, faults+iv.Faults, struck+iv.Struck
	}
	want := 0
	for _, c := range ps {
		want += c.Steps
	}
	last := ps[len(ps)-1]
	if math.Abs(steps-float64(want)) > 1e-6 || math.Abs(faults-float64(last.Faults)) > 1e-6 || math.Abs(struck-float64(last.Struck)) > 1e-6 {
		t.Fatalf("intervals hold %.3f steps, %.3f faults, %.3f struck; want %d, %d, %d", steps, faults, struck, want, last.Faults, last.Struck)
	}
	if end := ivs[len(ivs)-1].To; end != last.At {
		t.Fatalf("the intervals end at %v, the last check at %v", end, last.At)
	}
}

// A run of many checks gets a plot of steps/s and faults over time, with
// its shrinking and its failure marked and a caption in words; a run of
// a few checks, an old report and a merge do not.
func TestRatePlotOnlyForLongRuns(t *testing.T) {
	r := progressSample()
	page := html(t, r)
	for _, want := range []string{`<svg id="rate"`, `class="rate-line"`, `class="fault-bar struck"`, `class="shrink-band"`,
		"check 40 failed", "40 checks over", "grey band is the time rapid spent shrinking the failure found at check 40: 120 replays"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	calm := progressSample()
	for i := range calm.Progress {
		calm.Progress[i].Faults, calm.Progress[i].Struck = 0, 0
	}
	calm.Shrinking, calm.Failure, calm.Verdict = nil, nil, Pass
	if page := html(t, calm); strings.Contains(page, `class="fault-bar`) || strings.Contains(page, `class="shrink-band"`) || !strings.Contains(page, "No fault was injected") {
		t.Error("a run without faults or shrinking draws them")
	}
	short := progressSample()
	short.Progress = short.Progress[:minPlotChecks-1]
	half1, half2 := progressSample(), progressSample()
	half1.Shard, half2.Shard = "1/2", "2/2"
	merged, err := Merge([]*Report{half1, half2})
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*Report{"short": short, "old": sample(), "merged": merged} {
		if strings.Contains(html(t, r), `id="rate"`) {
			t.Errorf("%s run: a rate plot", name)
		}
	}
}

// Progress is in report.json, and left out when there is none.
func TestProgressInJSON(t *testing.T) {
	b, _ := json.Marshal(progressSample())
	if !strings.Contains(string(b), `"progress":[{"check":1,"at":0.2,"steps":20,"faults":0,"struck":0}`) || !strings.Contains(string(b), `"shrinking":{"from"`) {
		t.Fatalf("report.json lacks the progress: %.300s", b)
	}
	if b, _ := json.Marshal(sample()); strings.Contains(string(b), "progress") || strings.Contains(string(b), "shrinking") {
		t.Fatalf("empty progress is not left out: %s", b)
	}
}

// With several schedules at once, check 6 may end before the sixth
// schedule to end does: the failure's line is where check 6 ended
// (first_failed_at_seconds), at the shrinking band's start, not at the
// sixth checkpoint. A newcomer saw the line 7 s after the band began.
func TestFailureLineIsWhenTheFailingCheckEnded(t *testing.T) {
	r := progressSample()
	r.Failure.FirstCheck, r.Failure.FirstAt = 6, 1.5
	r.Shrinking = &Span{From: 1.5, To: 9}
	rp := newRatePlot(r)
	if rp == nil {
		t.Fatal("no plot")
	}
	p := &plotter{r: r, end: max(r.Progress[len(r.Progress)-1].At, r.Shrinking.To)}
	i := slices.IndexFunc(rp.Shapes, func(s shape) bool { return s.Class == "failline" })
	if i < 0 {
		t.Fatal("no failure line")
	}
	if x := rp.Shapes[i].X; x != p.x(1.5) {
		t.Errorf("the failure's line at x=%d, want %d (1.5 s); the sixth checkpoint is at x=%d", x, p.x(1.5), p.x(r.Progress[5].At))
	}
	r.Contract = LoopContract
	if c := newRatePlot(r).Caption; !strings.Contains(c, "the time the loop shrinker spent shrinking the failure found at check 6") {
		t.Errorf("a loop run's caption: %s", c)
	}
}
