package reports

import (
	"fmt"
	"time"
)

// axis places steps along x. Its kind is "time" when the clock moves from
// step to step (the loop contract's real elapsed time), and "step" when it
// does not (the step contract's harness clock, which only AdvanceClock
// moves): then each step, or each fold of no-op steps, gets a column.
type axis struct {
	Kind  string // time or step
	Cols  []column
	Width int   // from the left of the plot to its right
	col   []int // step index → its column
	Ticks []tick
}

type column struct {
	X, W int // centre and width
	Run  run
}

type tick struct {
	X     int
	Label string
	Title string
	Clock bool // a clock label on a step axis
}

const (
	colW     = 30 // a step's column
	foldW    = 24 // a fold's column
	minGap   = 18 // the closest two marks come on a time axis
	timeUnit = colW
	minPlotW = 900 // a short story's columns widen to fill this
	maxColW  = 90
)

// newAxis lays out steps, folding runs of no-ops on a step axis.
func newAxis(steps []Step) axis {
	clocks := parseClocks(steps)
	if clockMoves(clocks) {
		return timeAxis(steps, clocks)
	}
	return stepAxis(steps, clocks)
}

func parseClocks(steps []Step) []time.Time {
	out := make([]time.Time, len(steps))
	for i, s := range steps {
		out[i], _ = time.Parse("15:04:05.000000", s.Clock)
	}
	return out
}

// clockMoves reports whether most steps happen later than the one before.
func clockMoves(c []time.Time) bool {
	moved := 0
	for i := 1; i < len(c); i++ {
		if c[i].After(c[i-1]) {
			moved++
		}
	}
	return len(c) > 1 && moved*10 >= (len(c)-1)*9
}

func stepAxis(steps []Step, clocks []time.Time) axis {
	a := axis{Kind: "step", col: make([]int, len(steps))}
	rs := runs(steps)
	wide := min(max(colW, minPlotW/len(rs)), maxColW) // a short story fills the width
	x := 0
	for _, r := range rs {
		w := wide
		if r.Fold {
			w = foldW
		}
		for i := r.From; i <= r.To; i++ {
			a.col[i] = len(a.Cols)
		}
		a.Cols = append(a.Cols, column{X: x + w/2, W: w, Run: r})
		x += w
	}
	a.Width = x + colW
	a.stepTicks(steps, clocks)
	return a
}

// stepTicks numbers the columns (every fifth, the first and the last) and
// labels the clock where it moved, where there is room.
func (a *axis) stepTicks(steps []Step, clocks []time.Time) {
	lastClock := -100
	for ci, c := range a.Cols {
		r := c.Run
		if r.Fold {
			a.Ticks = append(a.Ticks, tick{X: c.X, Label: "⋯", Title: fmt.Sprintf("steps %d–%d: %d no-op steps, folded", r.From+1, r.To+1, r.Len())})
		} else if n := r.From + 1; n == 1 || n%5 == 0 || ci == len(a.Cols)-1 {
			a.Ticks = append(a.Ticks, tick{X: c.X, Label: steps[r.From].Num()})
		}
		if i := r.From; i > 0 && clocks[i].After(clocks[i-1]) && c.X-lastClock >= 52 {
			lastClock = c.X
			a.Ticks = append(a.Ticks, tick{X: c.X, Label: elapsed(clocks[i].Sub(clocks[0])), Title: "harness clock " + steps[i].Clock, Clock: true})
		}
	}
}

func timeAxis(steps []Step, clocks []time.Time) axis {
	a := axis{Kind: "time", col: make([]int, len(steps))}
	span := clocks[len(clocks)-1].Sub(clocks[0])
	// A short story fills the width, so that its time labels do not overlap.
	scale := float64(max(timeUnit*len(steps), minPlotW-colW)) / float64(max(span, time.Millisecond))
	x := -minGap
	for i := range steps {
		x = max(colW/2+int(float64(clocks[i].Sub(clocks[0]))*scale), x+minGap)
		a.col[i] = i
		a.Cols = append(a.Cols, column{X: x, W: minGap, Run: run{From: i, To: i}})
	}
	a.Width = x + colW
	step := niceStep(span / 8)
	for d := time.Duration(0); d <= span; d += step {
		a.Ticks = append(a.Ticks, tick{X: colW/2 + int(float64(d)*scale), Label: elapsed(d)})
	}
	return a
}

// niceStep rounds d up to 1, 2 or 5 times a power of ten (of ms).
func niceStep(d time.Duration) time.Duration {
	s := time.Millisecond
	for {
		for _, m := range []time.Duration{1, 2, 5} {
			if s*m >= d {
				return s * m
			}
		}
		s *= 10
	}
}

// elapsed prints a duration for an axis: "250ms", "1.2s", "2m2s"; below
// 10 s to a tenth, so that ticks 200 ms apart do not read alike.
func elapsed(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// X is the centre of step i's column.
func (a axis) X(i int) int { return a.Cols[a.col[i]].X }

// Col is step i's column.
func (a axis) Col(i int) column { return a.Cols[a.col[i]] }
