package reports

import (
	"fmt"
	"slices"
	"strings"
)

// span is a fault window on the faults track: a partition from Partition
// to Heal, an actor down from its crash to its restart, or an instant (a
// database or consumer crash).
type span struct {
	Row      string // the actor, or "database"
	From, To int    // step indices; To == From: an instant
	Kind     string // fault, down or crash
	What     string
}

// spans finds the fault windows of steps; a window still open at the end
// runs to the last step.
func spans(steps []Step) []span {
	var out []span
	open := map[string]span{} // row/kind → window
	closeWin := func(key string, to int) {
		if w, ok := open[key]; ok {
			w.To = to
			out = append(out, w)
			delete(open, key)
		}
	}
	for i, s := range steps {
		switch s.Action {
		case "Partition":
			closeWin(s.Actor+"/fault", i)
			open[s.Actor+"/fault"] = span{Row: s.Actor, From: i, Kind: "fault", What: words(s.Input)}
		case "Heal":
			closeWin(s.Actor+"/fault", i)
		case "CrashDispatcher", "CrashMidMark":
			closeWin(s.Actor+"/fault", i)
			open[s.Actor+"/down"] = span{Row: s.Actor, From: i, Kind: "down", What: "down"}
		case "Restart":
			closeWin(s.Actor+"/down", i)
		case "CrashDatabase":
			out = append(out, span{Row: "database", From: i, To: i, Kind: "crash", What: "crash"})
		case "CrashConsumer":
			out = append(out, span{Row: s.Actor, From: i, To: i, Kind: "crash", What: "crash"})
		case "Drain":
			for _, k := range slices.Sorted(mapKeys(open)) {
				closeWin(k, i)
			}
		}
	}
	for _, k := range slices.Sorted(mapKeys(open)) {
		closeWin(k, len(steps)-1)
		out[len(out)-1].To = len(steps) // still open: past the last step
	}
	return out
}

// faultsTrack draws the fault windows, one row per actor that had one.
func (b *builder) faultsTrack() {
	b.section("faults")
	ws := spans(b.steps)
	if len(ws) == 0 {
		b.lane("none", "no fault or crash in this counterexample", trackH)
		return
	}
	var rows []string
	for _, w := range ws {
		if !slices.Contains(rows, w.Row) {
			rows = append(rows, w.Row)
		}
	}
	slices.SortFunc(rows, func(a, c string) int { return strings.Compare(laneKey(a), laneKey(c)) })
	for _, r := range rows {
		top := b.lane(r, "", trackH)
		for _, w := range ws {
			if w.Row == r {
				b.add(b.window(w, top)...)
			}
		}
	}
}

// window is one span's shading and label on a row whose top is top.
func (b *builder) window(w span, top int) []shape {
	x0 := b.ax.X(w.From) - b.ax.Col(w.From).W/2
	x1 := b.ax.X(min(w.To, len(b.steps)-1)) - b.ax.Col(min(w.To, len(b.steps)-1)).W/2
	switch {
	case w.To >= len(b.steps):
		x1 = b.ax.Width - colW/2
	case w.To == w.From:
		x1 = x0 + b.ax.Col(w.From).W
	}
	title := fmt.Sprintf("%s: %s, steps %d–%d", w.Row, w.What, w.From+1, min(w.To, len(b.steps))+1)
	if w.To == w.From {
		title = fmt.Sprintf("%s: %s at step %d", w.Row, w.What, w.From+1)
	}
	out := []shape{{Kind: "rect", X: x0, Y: top + 2, W: max(x1-x0, 4), H: trackH - 4, Class: "win " + w.Kind, Title: title}}
	return append(out, repeatText(x0, x1, top+trackH/2+4, w.What, "wintext", title)...)
}
