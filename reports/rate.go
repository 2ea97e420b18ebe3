package reports

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// ratePlot is report.html's picture of a run over time: steps/s over
// fixed intervals (a line), the faults of each interval (bars, the struck
// part darker), the span rapid spent shrinking a failure, and where the
// failure was found. Its caption says the same in words.
type ratePlot struct {
	Width, Height int
	Shapes        []shape
	Caption       string
}

// minPlotChecks is how many checks a run needs for a rate plot: fewer
// make a line of one or two points, which says nothing the summary does
// not.
const minPlotChecks = 5

// Layout of the plot, in pixels.
const (
	plotWidth  = 960
	plotLeft   = 64 // room for the y labels
	plotRight  = 24
	plotTop    = 22
	rateH      = 130 // the steps/s panel
	panelGap   = 26
	faultH     = 56 // the faults panel
	axisLabelH = 30
)

// interval is one of the plot's fixed stretches of time. What a check
// did is spread evenly over the time it ran.
type interval struct {
	From, To              float64 // seconds; To is cut at the last check's end
	Steps, Faults, Struck float64 // steps run and faults injected and struck in it
	Checks                []int   // the checks that ended in it
}

// rate is the interval's steps per second.
func (iv interval) rate() float64 { return iv.Steps / max(iv.To-iv.From, 1e-9) }

// newRatePlot draws r's progress, or returns nil when there is too little
// of it to plot.
func newRatePlot(r *Report) *ratePlot {
	ps := r.Progress
	if len(ps) < minPlotChecks || ps[len(ps)-1].At <= 0 {
		return nil
	}
	ivs, width := intervals(ps)
	end := ps[len(ps)-1].At
	if r.Shrinking != nil {
		end = max(end, r.Shrinking.To)
	}
	p := &plotter{r: r, ivs: ivs, end: end, faults: ps[len(ps)-1].Faults > 0}
	p.draw()
	return &ratePlot{Width: plotWidth, Height: p.height, Shapes: p.shapes, Caption: p.caption(width)}
}

// intervals cuts the run into intervals of a round width, about one per
// check and at most 60, and spreads each check's steps and faults evenly
// over the time it ran (from the end of the check before it).
func intervals(ps []Checkpoint) ([]interval, time.Duration) {
	end := ps[len(ps)-1].At
	want := min(max(len(ps), 8), 60)
	width := niceStep(time.Duration(end / float64(want) * float64(time.Second)))
	w := width.Seconds()
	ivs := make([]interval, int(math.Ceil(end/w-1e-9)))
	for k := range ivs {
		ivs[k].From, ivs[k].To = float64(k)*w, min(float64(k+1)*w, end)
	}
	prev := Checkpoint{}
	for _, c := range ps {
		last := min(int(c.At/w), len(ivs)-1)
		ivs[last].Checks = append(ivs[last].Checks, c.Check)
		for k := range ivs {
			share := 0.0
			if c.At > prev.At {
				share = max(min(c.At, ivs[k].To)-max(prev.At, ivs[k].From), 0) / (c.At - prev.At)
			} else if k == last {
				share = 1 // no time of its own: all of it where it ended
			}
			ivs[k].Steps += share * float64(c.Steps)
			ivs[k].Faults += share * float64(c.Faults-prev.Faults)
			ivs[k].Struck += share * float64(c.Struck-prev.Struck)
		}
		prev = c
	}
	return ivs, width
}

// plotter lays the plot out.
type plotter struct {
	r      *Report
	ivs    []interval
	end    float64 // seconds the x axis spans
	faults bool    // whether the run injected any: the faults panel
	shapes []shape
	height int
}

func (p *plotter) add(s ...shape) { p.shapes = append(p.shapes, s...) }

// x is the abscissa of second t.
func (p *plotter) x(t float64) int {
	return plotLeft + int(math.Round(t/p.end*float64(plotWidth-plotLeft-plotRight)))
}

func (p *plotter) draw() {
	bottom := plotTop + rateH
	p.shrinkBand(bottom)
	p.rateLine(plotTop, rateH)
	if p.faults {
		top := bottom + panelGap
		p.faultBars(top, faultH)
		bottom = top + faultH
	}
	p.xAxis(bottom)
	p.failure(bottom)
	p.hovers(bottom)
	p.height = bottom + axisLabelH
}

// rateLine draws steps/s as a line over the intervals' middles, with a
// y axis from 0 to a round maximum.
func (p *plotter) rateLine(top, h int) {
	var most float64
	for _, iv := range p.ivs {
		most = max(most, iv.rate())
	}
	ymax := niceUp(most)
	y := func(v float64) int { return top + h - int(math.Round(v/ymax*float64(h))) }
	p.panel(top, h, "steps/s", []float64{0, ymax / 2, ymax}, y)
	// Through the intervals' middles, held level to both ends.
	first, last := p.ivs[0], p.ivs[len(p.ivs)-1]
	pts := []string{fmt.Sprintf("%d %d", p.x(first.From), y(first.rate()))}
	for _, iv := range p.ivs {
		pts = append(pts, fmt.Sprintf("%d %d", p.x((iv.From+iv.To)/2), y(iv.rate())))
	}
	pts = append(pts, fmt.Sprintf("%d %d", p.x(last.To), y(last.rate())))
	line := "M" + strings.Join(pts, " L")
	area := fmt.Sprintf("%s L%d %d L%d %d Z", line, p.x(last.To), y(0), p.x(first.From), y(0))
	p.add(shape{Kind: "path", D: area, Class: "rate-area"}, shape{Kind: "path", D: line, Class: "rate-line"})
}

// faultBars draws each interval's faults injected as a bar, the struck
// ones darker in front.
func (p *plotter) faultBars(top, h int) {
	most := 0.0
	for _, iv := range p.ivs {
		most = max(most, iv.Faults)
	}
	ymax := niceUp(most)
	y := func(v float64) int { return top + h - int(math.Round(v/ymax*float64(h))) }
	p.panel(top, h, "faults", []float64{0, ymax}, y)
	for _, iv := range p.ivs {
		x0, x1 := p.x(iv.From)+1, p.x(iv.To)-1
		for _, b := range []struct {
			n     float64
			class string
		}{{iv.Faults, "fault-bar"}, {iv.Struck, "fault-bar struck"}} {
			if h := y(0) - y(b.n); h > 0 {
				p.add(shape{Kind: "rect", X: x0, Y: y(b.n), W: max(x1-x0, 1), H: h, Class: b.class})
			}
		}
	}
}

// panel draws a panel's frame, its y labels at ticks and its name.
func (p *plotter) panel(top, h int, name string, ticks []float64, y func(float64) int) {
	right := plotWidth - plotRight
	for _, v := range ticks {
		p.add(shape{Kind: "line", X: plotLeft, Y: y(v), X2: right, Y2: y(v), Class: "grid"},
			shape{Kind: "text", X: plotLeft - 6, Y: y(v) + 4, Text: number(v), Class: "tick", Anchor: "end"})
	}
	p.add(shape{Kind: "text", X: plotLeft + 4, Y: top - 6, Text: name, Class: "section"})
}

// xAxis labels elapsed time under the last panel.
func (p *plotter) xAxis(bottom int) {
	step := niceStep(time.Duration(p.end / 8 * float64(time.Second)))
	for d := time.Duration(0); d.Seconds() <= p.end+1e-9; d += step {
		p.add(shape{Kind: "text", X: p.x(d.Seconds()), Y: bottom + 16, Text: tickText(d), Class: "tick", Anchor: "middle"})
	}
	p.add(shape{Kind: "text", X: plotWidth - plotRight, Y: bottom + 28, Text: "elapsed", Class: "tick", Anchor: "end"})
}

// shrinkBand shades the time rapid spent shrinking, over every panel.
func (p *plotter) shrinkBand(rateBottom int) {
	s := p.r.Shrinking
	if s == nil {
		return
	}
	bottom := rateBottom
	if p.faults {
		bottom += panelGap + faultH
	}
	x0, x1 := p.x(s.From), p.x(s.To)
	title := fmt.Sprintf("shrinking the failure: %s to %s, %d replays (not counted in steps/s)", elapsed(secs(s.From)), elapsed(secs(s.To)), p.r.ShrinkRuns)
	p.add(shape{Kind: "rect", X: x0, Y: plotTop, W: max(x1-x0, 3), H: bottom - plotTop, Class: "shrink-band", Title: title})
	if x1-x0 >= 70 {
		p.add(shape{Kind: "text", X: (x0 + x1) / 2, Y: plotTop + 14, Text: "shrinking", Class: "shrink-text", Anchor: "middle", Title: title})
	}
}

// failure marks where the run first failed.
func (p *plotter) failure(bottom int) {
	f := p.r.Failure
	if f == nil || f.FirstCheck == 0 {
		return
	}
	at := f.FirstAt
	if i := slices.IndexFunc(p.r.Progress, func(c Checkpoint) bool { return c.Check == f.FirstCheck }); at <= 0 && i >= 0 {
		at = p.r.Progress[i].At // a report from before first_failed_at_seconds
	}
	if at <= 0 {
		return
	}
	x := p.x(at)
	p.add(shape{Kind: "line", X: x, Y: plotTop - 4, X2: x, Y2: bottom, Class: "failline"},
		shape{Kind: "text", X: x - 4, Y: plotTop + 30, Text: fmt.Sprintf("check %d failed", f.FirstCheck), Class: "failtext", Anchor: "end"})
}

// hovers puts each interval's figures in a tooltip over its column.
func (p *plotter) hovers(bottom int) {
	for _, iv := range p.ivs {
		title := fmt.Sprintf("%s–%s: %.0f steps/s", elapsed(secs(iv.From)), elapsed(secs(iv.To)), iv.rate())
		if p.faults {
			title += fmt.Sprintf(", %.1f faults injected, %.1f struck", iv.Faults, iv.Struck)
		}
		if n := len(iv.Checks); n > 0 {
			title += fmt.Sprintf("; checks %d–%d ended", iv.Checks[0], iv.Checks[n-1])
		}
		p.add(shape{Kind: "rect", X: p.x(iv.From), Y: plotTop, W: max(p.x(iv.To)-p.x(iv.From), 1), H: bottom - plotTop, Class: "hit", Title: title})
	}
}

// caption says in words what the plot shows.
func (p *plotter) caption(width time.Duration) string {
	lo, hi := math.Inf(1), 0.0
	for _, iv := range p.ivs {
		lo, hi = min(lo, iv.rate()), max(hi, iv.rate())
	}
	ps := p.r.Progress
	last := ps[len(ps)-1]
	out := fmt.Sprintf("%d checks over %s. The line is steps per second over intervals of %s (each check's steps spread over the time it ran): between %.0f and %.0f steps/s.",
		len(ps), duration(last.At), width, lo, hi)
	switch {
	case !p.faults:
		out += " No fault was injected."
	case !p.r.Faults:
		out += fmt.Sprintf(" The bars are the faults of each interval: with faults off, the broker's refusals and the actors' crashes every run has (%d in all).", last.Faults)
	default:
		out += fmt.Sprintf(" The bars are the faults injected in each interval, as the fault coverage counts them (%d in all), the darker part those that struck (%d).", last.Faults, last.Struck)
	}
	if s := p.r.Shrinking; s != nil {
		found := "the failure"
		if f := p.r.Failure; f != nil && f.FirstCheck > 0 {
			found = fmt.Sprintf("the failure found at check %d", f.FirstCheck)
		}
		who := "rapid"
		if p.r.Contract == LoopContract {
			who = "the loop shrinker"
		}
		out += fmt.Sprintf(" The grey band is the time %s spent shrinking %s: %d replays over %s, not counted in steps/s.",
			who, found, p.r.ShrinkRuns, duration(s.To-s.From))
	}
	return out
}

// niceUp rounds v up to a round number: 1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8
// times a power of ten (1 for v ≤ 0).
func niceUp(v float64) float64 {
	if v <= 0 {
		return 1
	}
	s := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if s*m >= v {
			return s * m
		}
	}
	return 10 * s
}

// number prints an axis value: whole numbers as such, others with one
// decimal.
func number(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// duration prints s seconds for a sentence: "3.9s", "24s", "2m5s".
func duration(s float64) string {
	if s < 10 {
		return fmt.Sprintf("%.1fs", s)
	}
	return secs(s).Round(time.Second).String()
}

// tickText prints a round duration exactly: "1.5s", "2m", "500ms".
func tickText(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	return s
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
