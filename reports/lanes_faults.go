package reports

import (
	"fmt"
	"slices"
	"strings"
)

// span is a fault window on the faults track: a partition from Partition
// to Heal, an actor down from its crash to its restart, a broker outage
// or slow window, a held transaction, the sessions' time zone, or an
// instant (a database or consumer crash, a poison, a lost ack).
type span struct {
	Row      string // the actor, "broker", "database" or "time zone"
	From, To int    // step indices; To == From: an instant
	Kind     string // fault, down or crash
	What     string
}

// window is how an action opens a window: on which row (the step's
// actor if ""), under which key (row/key), of which kind, saying what.
type window struct{ row, key, kind, what string }

// opens are the actions that open a window; closes, the ones that close
// one (row "": the step's actor); instants, the ones that are one.
var (
	opens = map[string]window{
		"Partition": {key: "fault", kind: "fault"}, "Wedge": {key: "fault", kind: "fault", what: "severed mid-publish (wedge)"},
		"CrashDispatcher": {key: "down", kind: "down", what: "down"}, "CrashMidMark": {key: "down", kind: "down", what: "down"},
		"StopDispatcher":  {key: "down", kind: "down", what: "stopped"},
		"BrokerDown":      {row: "broker", key: "down", kind: "down", what: "down"},
		"BrokerSlow":      {row: "broker slow", key: "slow", kind: "fault", what: "slow: acknowledgements late"},
		"HoldTransaction": {row: "database", key: "hold", kind: "fault", what: "transaction held"},
		// The loop contract's.
		"Cold":       {row: "dispatchers", key: "down", kind: "down", what: "cold start: not started with the schedule"},
		"Crashed":    {key: "down", kind: "down", what: "crashed publishing"},
		"BrokerLink": {row: "broker", key: "link", kind: "fault", what: "broker link faulted"},
	}
	closes = map[string]window{
		"Heal": {key: "fault"}, "Restart": {key: "down"},
		"BrokerUp": {row: "broker", key: "down"}, "BrokerPrompt": {row: "broker slow", key: "slow"},
		"ReleaseTransaction": {row: "database", key: "hold"},
		"BrokerLinkHealed":   {row: "broker", key: "link"},
	}
	instants = map[string]window{
		"CrashDatabase": {row: "database", kind: "crash", what: "crash"}, "CrashConsumer": {kind: "crash", what: "crash"},
		"Poison": {row: "broker", kind: "crash", what: "poison"}, "AckLost": {row: "broker", kind: "crash", what: "ack lost"},
		// The loop contract's.
		"CrashLoop": {row: "broker", kind: "crash", what: "crash loop: its publishes crash the relay"},
		"Strand":    {kind: "crash", what: "stranded mid-publish"},
		"Freeze":    {kind: "crash", what: "frozen"}, "StopMidBatch": {kind: "crash", what: "stopped mid-batch"},
		"WindowOutage": {row: "broker", kind: "crash", what: "cut off past the dedupe window"},
		"SlowPayment":  {row: "broker", kind: "crash", what: "one payment slow"},
		"SchemaChange": {row: "database", kind: "crash", what: "schema changed"},
	}
	// caught are the loop's actions that strike a relay caught
	// publishing: recorded by the operator, they caught none (or, for a
	// crash loop, were not applicable), and mark nothing.
	caught = []string{"Wedge", "Strand", "Freeze", "StopMidBatch", "WindowOutage", "CrashLoop"}
)

// struck says whether step s did what it names: not skipped, failed,
// not made, nor a catch that caught no relay.
func struck(s Step) bool {
	for _, p := range []string{"skipped", "error", "not made"} {
		if strings.HasPrefix(s.Result, p) {
			return false
		}
	}
	return s.Actor != "operator" || !slices.Contains(caught, s.Action)
}

// spans finds the fault windows of steps; a window still open at the end
// runs to the last step. A step that was skipped or failed opens none.
func spans(steps []Step) []span {
	var out []span
	open := map[string]span{} // row/key → window
	closeWin := func(key string, to int) {
		if w, ok := open[key]; ok {
			w.To = to
			out = append(out, w)
			delete(open, key)
		}
	}
	rowOf := func(w window, s Step) string {
		if w.row != "" {
			return w.row
		}
		return s.Actor
	}
	for i, s := range steps {
		if !struck(s) {
			continue
		}
		if w, ok := closes[s.Action]; ok {
			closeWin(rowOf(w, s)+"/"+w.key, i)
		}
		if w, ok := instants[s.Action]; ok {
			out = append(out, span{Row: rowOf(w, s), From: i, To: i, Kind: w.kind, What: w.what})
		}
		if w, ok := opens[s.Action]; ok {
			row, what := rowOf(w, s), w.what
			if what == "" {
				what = words(s.Input)
			}
			if strings.HasPrefix(s.Action, "Crash") {
				closeWin(row+"/fault", i) // a crash ends what was on its link
			}
			closeWin(row+"/"+w.key, i)
			open[row+"/"+w.key] = span{Row: row, From: i, Kind: w.kind, What: what}
		}
		switch {
		case s.Action == "TimeZone" && s.Input != "UTC":
			closeWin("time zone/zone", i)
			open["time zone/zone"] = span{Row: "time zone", From: i, Kind: "fault", What: "sessions in " + s.Input}
		case s.Action == "Drain":
			for _, k := range slices.Sorted(mapKeys(open)) {
				if k != "time zone/zone" { // the drain's sessions stay in it
					closeWin(k, i)
				}
			}
		}
	}
	for _, k := range slices.Sorted(mapKeys(open)) {
		closeWin(k, len(steps)-1)
		out[len(out)-1].To = len(steps) // still open: past the last step
	}
	return out
}

// rowLabel names a faults row so that no two lanes of the timeline share
// a name: an actor's row is its link's; the others keep theirs.
func rowLabel(row string) string {
	switch row {
	case "broker":
		return "broker faults"
	case "broker slow", "database", "time zone":
		return row
	}
	return row + " link"
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
		top := b.lane(rowLabel(r), "", trackH)
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
