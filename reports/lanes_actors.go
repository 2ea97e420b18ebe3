package reports

import (
	"fmt"
	"slices"
	"strings"
)

// actorLanes draws one lane per actor with a mark per step, coloured by
// the call's outcome: ok, failed, unknown, or none (no call: a fault, the
// clock). A folded no-op step is a small dot.
func (b *builder) actorLanes() {
	b.section("actors")
	var names []string
	for _, s := range b.steps {
		if !slices.Contains(names, s.Actor) {
			names = append(names, s.Actor)
		}
	}
	slices.SortFunc(names, func(a, c string) int { return strings.Compare(laneKey(a), laneKey(c)) })
	for _, n := range names {
		y := b.lane(n, "", laneH) + laneH/2
		for i, s := range b.steps {
			if s.Actor == n {
				b.add(b.mark(i, y)...)
			}
		}
	}
}

// mark is step i's mark on a lane at y.
func (b *builder) mark(i, y int) []shape {
	s := b.steps[i]
	x, col := b.ax.X(i), b.ax.Col(i)
	title := b.sh.text(stepTitle(s))
	if col.Run.Fold {
		return []shape{{Kind: "circle", X: x, Y: y, R: 4, Class: "step noop", Title: title, Step: s.N}}
	}
	m := shape{Kind: "circle", X: x, Y: y, R: 10, Class: "step " + outcomeClass(s), Title: title, Step: s.N}
	if i == len(b.steps)-1 {
		m.R, m.Class, m.ID = 12, m.Class+" failing", "failing-step"
	}
	return []shape{m, {Kind: "text", X: x, Y: y + 4, Class: "num", Text: s.Num(), Anchor: "middle", Title: title}}
}

// outcomeClass is ok, failed, unknown or none.
func outcomeClass(s Step) string {
	switch s.Outcome {
	case "ok", "failed", "unknown":
		return s.Outcome
	case "":
		if strings.HasPrefix(s.Result, "error") {
			return "failed" // a report from before outcomes were recorded
		}
		if s.Result != "" {
			return "ok"
		}
	}
	return "none"
}

// stepTitle is a step's tooltip.
func stepTitle(s Step) string {
	t := fmt.Sprintf("step %s at %s\n%s: %s %s", s.Num(), s.Clock, s.Actor, words(s.Action), s.Input)
	if s.Result != "" {
		t += "\nactual: " + s.Result
	}
	if s.Outcome != "" {
		t += " (" + s.Outcome + ")"
	}
	if s.Expect != "" {
		t += "\nmodel: " + s.Expect
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

// brokerLane draws the broker's log: each message it accepted (green: the
// publisher got the acknowledgement; amber: it did not), each publish it
// refused (red), and each delivery a consumer acknowledged (blue). A
// story that records no publish (the loop contract's: its broker's
// record is not in the story) gets none: an empty log would say nothing
// was published.
func (b *builder) brokerLane() {
	if !slices.ContainsFunc(b.steps, func(s Step) bool { return s.Action == "Publish" || len(s.Broker) > 0 }) {
		return
	}
	b.t.Broker = true
	y := b.lane("broker log", "publishes the broker accepted or refused, deliveries consumers acknowledged", laneH) + laneH/2
	for i, s := range b.steps {
		x := b.ax.X(i)
		for k, id := range s.Broker {
			class, what := "pub ok", "accepted and acknowledged"
			if s.Outcome != "ok" && s.Outcome != "" {
				class, what = "pub unknown", "accepted; the acknowledgement was lost"
			}
			b.add(shape{Kind: "rect", X: x - 6 + 3*k, Y: y - 6 - 3*k, W: 12, H: 12, Class: class,
				Title: fmt.Sprintf("step %s: the broker took %s from %s: %s", s.Num(), b.sh.id(id), s.Actor, what)})
		}
		switch {
		case s.Action == "Publish" && len(s.Broker) == 0 && s.Outcome != "ok":
			b.add(shape{Kind: "text", X: x, Y: y + 6, Class: "refused", Text: "✕", Anchor: "middle",
				Title: fmt.Sprintf("step %s: %s's publish: %s", s.Num(), s.Actor, s.Result)})
		case strings.HasPrefix(s.Action, "Deliver") || s.Action == "CrashConsumer":
			class := "delivery " + outcomeClass(s)
			b.add(shape{Kind: "text", X: x, Y: y + 6, Class: class, Text: "▼", Anchor: "middle",
				Title: b.sh.text(fmt.Sprintf("step %s: delivered %s to %s: %s", s.Num(), s.Input, s.Actor, s.Result))})
		}
	}
}
