package reports

// storyRow is a row of the story table: one step, or a fold of no-op
// steps shown by a <details>.
type storyRow struct {
	Fold  bool
	From  int // the fold's first and last step numbers
	To    int
	Steps []stepView
}

// stepView is a step as the page shows it: words for keys, ids shortened.
type stepView struct {
	N                  int
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
		return stepView{N: s.N, Clock: s.Clock, Action: words(s.Action), Key: s.Action, Actor: s.Actor,
			Input: sh.text(s.Input), Result: sh.text(s.Result), Expect: sh.text(s.Expect),
			Outcome: outcomeClass(s), Failing: i == len(steps)-1, Noop: noop(s)}
	}
	var out []storyRow
	for _, r := range runs(steps) {
		row := storyRow{Fold: r.Fold, From: steps[r.From].N, To: steps[r.To].N}
		for i := r.From; i <= r.To; i++ {
			row.Steps = append(row.Steps, view(i))
		}
		out = append(out, row)
	}
	return out
}
