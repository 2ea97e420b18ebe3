package reports

import (
	"fmt"
	"slices"
	"strings"
)

// status is one event's status at a step, in the model and in the
// database; unread is set where the step was not read back (the database
// side is then the last one read).
type status struct {
	Model, DB string
	Unread    bool
}

func (s status) empty() bool  { return absent(s.Model) && absent(s.DB) }
func (s status) parted() bool { return s.Model != s.DB }

func absent(st string) bool { return st == "" || st == "ABSENT" }

// eventIDs lists the events of steps in order of first appearance.
func eventIDs(steps []Step) []string {
	var out []string
	for _, s := range steps {
		for _, m := range []map[string]string{s.Model, s.Rows} {
			for _, id := range slices.Sorted(mapKeys(m)) {
				if !slices.Contains(out, id) {
					out = append(out, id)
				}
			}
		}
	}
	return out
}

// statuses is every event's status after each step, carried forward over
// steps that recorded none.
func statuses(steps []Step) []map[string]status {
	out := make([]map[string]status, len(steps))
	var model, db map[string]string
	ids := eventIDs(steps)
	for i, s := range steps {
		if s.Model != nil {
			model = s.Model
		}
		if s.Rows != nil {
			db = s.Rows
		}
		out[i] = map[string]status{}
		for _, id := range ids {
			out[i][id] = status{Model: model[id], DB: db[id], Unread: s.Model != nil && s.Rows == nil}
		}
	}
	return out
}

// payments maps event_id → the payment whose Commit returned it.
func payments(steps []Step) map[string]string {
	out := map[string]string{}
	for _, s := range steps {
		if id, ok := strings.CutPrefix(s.Result, "event "); ok && s.Action == "Commit" {
			out[id] = s.Input
		}
	}
	return out
}

// eventLanes draws one lane per event: its status over the steps, one bar
// where the model and the database agree, split (model above, database
// below) where they part.
func (b *builder) eventLanes() {
	ids := eventIDs(b.steps)
	if len(ids) == 0 {
		return
	}
	b.section("events")
	b.t.Events = true
	st, pays := statuses(b.steps), payments(b.steps)
	for _, id := range ids {
		name := "event " + b.sh.id(id)
		if p := pays[id]; p != "" {
			name += " · " + p
		}
		top := b.lane(name, id, eventH)
		for _, seg := range b.segments(id, st) {
			b.add(b.bars(seg, top, name)...)
		}
	}
}

// segment is a stretch of columns where an event's status is the same.
type segment struct {
	From, To int // columns
	St       status
}

func (b *builder) segments(id string, st []map[string]status) []segment {
	var out []segment
	for ci, c := range b.ax.Cols {
		s := st[c.Run.To][id]
		if n := len(out); n > 0 && out[n-1].St == s && out[n-1].To == ci-1 {
			out[n-1].To = ci
			continue
		}
		if !s.empty() {
			out = append(out, segment{From: ci, To: ci, St: s})
		}
	}
	return out
}

// bars draws a segment on the lane whose top is top.
func (b *builder) bars(seg segment, top int, name string) []shape {
	from, to := b.ax.Cols[seg.From], b.ax.Cols[seg.To]
	x0, x1 := from.X-from.W/2+1, to.X+to.W/2-1
	steps := fmt.Sprintf("steps %d–%d", from.Run.From+1, to.Run.To+1)
	s := seg.St
	title := fmt.Sprintf("%s, %s\nmodel: %s\ndatabase: %s", name, steps, statusWords(s.Model), statusWords(s.DB))
	if s.Unread {
		title += " (not read back after this step)"
	}
	if s.Unread && s.parted() {
		return b.bar(x0, x1, top+3, eventH-6, s.Model, "model: "+statusWords(s.Model), title, " unread")
	}
	if !s.parted() {
		return b.bar(x0, x1, top+3, eventH-6, s.Model, statusWords(s.Model), title, "")
	}
	half := (eventH - 6) / 2
	out := b.bar(x0, x1, top+3, half, s.Model, "model: "+statusWords(s.Model), title, " model")
	return append(out, b.bar(x0, x1, top+3+half, half, s.DB, "db: "+statusWords(s.DB), title, " db")...)
}

func (b *builder) bar(x0, x1, y, h int, st, text, title, side string) []shape {
	class := "st " + statusClass(st) + side
	out := []shape{{Kind: "rect", X: x0, Y: y, W: max(x1-x0, 2), H: h, Class: class, Title: title}}
	fs := "sttext"
	if h < eventH-6 {
		fs = "sttext small"
	}
	if _, st, ok := strings.Cut(text, ": "); ok && !fits(text, x1-x0) {
		text = st // "model: " does not fit: the half says which side it is
	}
	return append(out, repeatText(x0, x1, y+h-3, text, fs, title)...)
}

// statusClass is the CSS class of a status: its name, or unknown for the
// model's "A|B".
func statusClass(st string) string {
	switch {
	case absent(st):
		return "absent"
	case strings.Contains(st, "|"):
		return "unknown"
	}
	return strings.ToLower(st)
}

// statusWords reads a status: "PUBLISHED or FAILED" for "PUBLISHED|FAILED",
// "no row" for ABSENT.
func statusWords(st string) string {
	var parts []string
	for _, p := range strings.Split(st, "|") {
		if absent(p) {
			p = "no row"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " or ")
}

// labelEvery is how far apart a long bar repeats its label, so that one
// is in view wherever the timeline is scrolled.
const labelEvery = 420

// repeatText labels the stretch x0–x1 with text, once and again every
// labelEvery pixels, where it fits.
func repeatText(x0, x1, y int, text, class, title string) []shape {
	var out []shape
	for x := x0; fits(text, x1-x); x += labelEvery {
		out = append(out, shape{Kind: "text", X: x + 3, Y: y, Class: class, Text: text, Title: title})
	}
	return out
}

// fits reports whether text fits in w pixels of the timeline's small type.
func fits(text string, w int) bool { return len([]rune(text))*6+6 <= w }
