package reports

import (
	"fmt"
	"slices"
	"strings"
)

// timeline is the SVG picture of a counterexample, top to bottom: the
// axis, the faults track, one lane per actor, the broker's log, and one
// lane per event with its status over the steps. The failing (last) step
// is marked across every lane.
type timeline struct {
	Width, Height int
	AxisTitle     string
	Labels        []shape // the lane names, in a column that does not scroll
	Shapes        []shape // the plot
	FailX         int     // the failing step's x, for the scroll on load
	// Broker and Events say whether it has the broker's log and event
	// lanes (the loop contract's story records neither), for the legend.
	Broker, Events bool
	names          map[string]bool // the lane names given so far
}

// shape is one SVG element of the timeline.
type shape struct {
	Kind          string // rect, circle, text, line, path
	X, Y, W, H, R int
	X2, Y2        int
	Class, Text   string
	Title, ID     string
	Step          int // data-step of a step's mark
	Anchor        string
	D             string // a path's outline
}

const (
	labelW   = 150 // the lane names' column
	axisH    = 36
	sectionH = 18
	laneH    = 28
	trackH   = 22
	eventH   = 30
)

// builder lays lanes out from the top.
type builder struct {
	t     *timeline
	ax    axis
	steps []Step
	sh    shortener
	y     int
}

func newTimeline(steps []Step) timeline {
	b := &builder{t: &timeline{}, ax: newAxis(steps), steps: steps, sh: newShortener(steps)}
	b.t.Width = b.ax.Width
	b.axisRow()
	b.faultsTrack()
	b.actorLanes()
	b.brokerLane()
	b.eventLanes()
	b.t.Height = b.y + 8
	b.failing()
	return *b.t
}

func (b *builder) add(s ...shape)   { b.t.Shapes = append(b.t.Shapes, s...) }
func (b *builder) label(s ...shape) { b.t.Labels = append(b.t.Labels, s...) }

// section starts a group of lanes under a heading.
func (b *builder) section(name string) {
	b.y += 6
	b.label(shape{Kind: "text", X: 4, Y: b.y + 12, Class: "section", Text: name})
	b.add(shape{Kind: "line", X: 0, Y: b.y + sectionH - 2, X2: b.t.Width, Y2: b.y + sectionH - 2, Class: "rule"})
	b.y += sectionH
}

// lane adds a lane of height h named name and returns its top. Lanes
// are named uniquely: a name given already is numbered.
func (b *builder) lane(name, title string, h int) int {
	if b.t.names == nil {
		b.t.names = map[string]bool{}
	}
	for n, base := 2, name; b.t.names[name]; n++ {
		name = fmt.Sprintf("%s (%d)", base, n)
	}
	b.t.names[name] = true
	top := b.y
	b.label(shape{Kind: "text", X: 12, Y: top + h/2 + 4, Text: name, Title: title})
	b.add(shape{Kind: "line", X: 0, Y: top + h/2, X2: b.t.Width, Y2: top + h/2, Class: "lane"})
	b.y += h
	return top
}

func (b *builder) axisRow() {
	b.t.AxisTitle = "step (the harness clock stands still between most steps; its moves are labelled)"
	if b.ax.Kind == "time" {
		b.t.AxisTitle = "elapsed time"
	}
	b.label(shape{Kind: "text", X: 4, Y: 14, Class: "section", Text: map[string]string{"step": "step", "time": "elapsed"}[b.ax.Kind]})
	if slices.ContainsFunc(b.ax.Ticks, func(t tick) bool { return t.Clock }) {
		b.label(shape{Kind: "text", X: 4, Y: 30, Class: "section", Text: "harness clock"})
	}
	for _, tk := range b.ax.Ticks {
		y, class := 14, "tick"
		if tk.Clock {
			y, class = 30, "tick clock"
		}
		b.add(shape{Kind: "text", X: tk.X, Y: y, Text: tk.Label, Title: tk.Title, Class: class, Anchor: "middle"})
	}
	for _, c := range b.ax.Cols {
		if c.Run.Fold {
			b.add(shape{Kind: "rect", X: c.X - c.W/2, Y: axisH, W: c.W, H: 0, Class: "fold", Title: foldTitle(b.steps, c.Run, b.sh)})
		}
	}
	b.y = axisH
}

// foldTitle lists a fold's steps.
func foldTitle(steps []Step, r run, sh shortener) string {
	lines := []string{fmt.Sprintf("%d no-op steps, folded:", r.Len())}
	for _, s := range steps[r.From : r.To+1] {
		lines = append(lines, sh.text(fmt.Sprintf("%s %s %s %s → %s", s.Num(), s.Actor, words(s.Action), s.Input, s.Result)))
	}
	return strings.Join(lines, "\n")
}

// failing draws a line through the failing step across every lane, and
// stretches the folds' shading to the full height.
func (b *builder) failing() {
	last := len(b.steps) - 1
	x := b.ax.X(last)
	b.t.FailX = x
	for i, s := range b.t.Shapes {
		if s.Class == "fold" {
			b.t.Shapes[i].H = b.t.Height - axisH
		}
	}
	b.t.Shapes = append([]shape{{Kind: "line", X: x, Y: axisH - 4, X2: x, Y2: b.t.Height, Class: "failline"}}, b.t.Shapes...)
}
