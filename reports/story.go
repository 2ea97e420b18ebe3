package reports

import "github.com/outboxcheck/outboxcheck/harness"

// storyRow is a row of the story table: one step, or a fold of no-op
// steps shown by a <details>.
type storyRow struct {
	Fold  bool
	From  string // the fold's first and last step numbers
	To    string
	Steps []stepView
}

// stepView is a step as the page shows it: words for keys, ids shortened.
type stepView struct {
	N                  string
	Clock, Action, Key string
	Actor, Input       string
	Result, Expect     string
	Outcome            string
	Failing, Noop      bool
}

func storyRows(steps []Step) []storyRow {
	sh := newShortener(steps)
	view := func(i int) stepView {
		s := steps[i]
		return stepView{N: s.Num(), Clock: s.Clock, Action: words(s.Action), Key: s.Action, Actor: s.Actor,
			Input: sh.text(s.Input), Result: sh.text(s.Result), Expect: sh.text(s.Expect),
			Outcome: outcomeClass(s), Failing: i == len(steps)-1, Noop: noop(s)}
	}
	var out []storyRow
	for _, r := range runs(steps) {
		row := storyRow{Fold: r.Fold, From: steps[r.From].Num(), To: steps[r.To].Num()}
		for i := r.From; i <= r.To; i++ {
			row.Steps = append(row.Steps, view(i))
		}
		out = append(out, row)
	}
	return out
}

// Num is the step's number as a page prints it: "end" for the drain
// after a loop schedule's last step.
func (s Step) Num() string { return harness.StepNumber(s.N) }

// StepCount is how many steps the counterexample has: its highest step
// number. Every step records an entry, so it is the schedule's length
// for a loop schedule, whose steps may record several entries each, and
// the number of entries for the step contract's.
func (ce *Counterexample) StepCount() int {
	n := 0
	for _, s := range ce.Steps {
		n = max(n, s.N)
	}
	return n
}
