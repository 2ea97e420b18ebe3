package reports

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// timeline is the SVG picture of a counterexample: one lane per actor, a
// mark per step on its actor's lane, fault and crash windows shaded, the
// failing (last) step highlighted.
type timeline struct {
	Width, Height int
	Lanes         []lane
	Windows       []window
	Marks         []mark
}

type lane struct {
	Name string
	Y    int
}

type window struct {
	X, Y, W, H int
	Kind       string // fault or down
	Title      string
}

type mark struct {
	X, Y    int
	Label   string
	Title   string
	Failing bool
}

const (
	laneH   = 34
	stepW   = 46
	marginL = 110
	marginT = 24
)

func newTimeline(steps []Step) timeline {
	var names []string
	for _, s := range steps {
		if !slices.Contains(names, s.Actor) {
			names = append(names, s.Actor)
		}
	}
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(laneKey(a), laneKey(b)) })
	y := map[string]int{}
	t := timeline{Width: marginL + stepW*(len(steps)+1), Height: marginT + laneH*len(names) + 10}
	for i, n := range names {
		y[n] = marginT + laneH*i
		t.Lanes = append(t.Lanes, lane{Name: n, Y: y[n]})
	}
	x := func(i int) int { return marginL + stepW*i + stepW/2 }
	type openWin struct {
		from       int
		kind, what string
	}
	open := map[string]openWin{}
	closeWin := func(actor string, to int) {
		o, ok := open[actor]
		if !ok {
			return
		}
		delete(open, actor)
		t.Windows = append(t.Windows, window{X: x(o.from), Y: y[actor] + 4, W: x(to) - x(o.from), H: laneH - 8, Kind: o.kind,
			Title: fmt.Sprintf("%s: %s, steps %d–%d", actor, o.what, o.from+1, to+1)})
	}
	for i, s := range steps {
		switch s.Action {
		case "Partition":
			closeWin(s.Actor, i)
			open[s.Actor] = openWin{i, "fault", s.Input}
		case "CrashDispatcher":
			closeWin(s.Actor, i)
			open[s.Actor] = openWin{i, "down", "crashed"}
		case "Heal", "Restart":
			closeWin(s.Actor, i)
		case "Drain":
			for _, a := range slices.Sorted(mapKeys(open)) {
				closeWin(a, i)
			}
		}
		title := fmt.Sprintf("step %d at %s\n%s %s %s", s.N, s.Clock, s.Actor, s.Action, s.Input)
		if s.Result != "" {
			title += "\nactual: " + s.Result
		}
		if s.Expect != "" {
			title += "\nmodel: " + s.Expect
		}
		t.Marks = append(t.Marks, mark{X: x(i), Y: y[s.Actor] + laneH/2, Label: strconv.Itoa(s.N), Title: title, Failing: i == len(steps)-1})
	}
	for _, a := range slices.Sorted(mapKeys(open)) {
		closeWin(a, len(steps))
	}
	return t
}

// laneKey orders lanes: producer, dispatchers, consumers, operator.
func laneKey(actor string) string {
	for i, p := range []string{"producer", "dispatcher", "consumer", "operator"} {
		if strings.HasPrefix(actor, p) {
			return fmt.Sprintf("%d%s", i, actor)
		}
	}
	return "9" + actor
}
