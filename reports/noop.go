package reports

import "strings"

// noop reports whether a step changed nothing a reader needs to follow: a
// cleanup that deleted nothing, a fenced mark or redrive, an empty claim,
// a crash of a dispatcher that held nothing. The failing step never is.
func noop(s Step) bool {
	switch {
	case s.Expect != "" || s.Outcome == "failed" || s.Outcome == "unknown":
		return false
	case s.Action == "Cleanup":
		return s.Result == "deleted 0"
	case s.Action == "Redrive", strings.HasPrefix(s.Action, "Mark"):
		return s.Result == "changed=false"
	case s.Action == "Claim":
		return s.Result == "claimed []" || s.Result == "claimed 0"
	case s.Action == "CrashDispatcher":
		return s.Input == "forgets 0 claims"
	}
	return false
}

// run is a stretch of steps, From to To (indices, inclusive): a fold of
// no-op steps, or one step.
type run struct {
	From, To int
	Fold     bool
}

// Len is the number of steps in the run.
func (r run) Len() int { return r.To - r.From + 1 }

// minFold is the fewest no-op steps in a row that are folded.
const minFold = 2

// runs splits steps into single steps and folds of minFold or more no-op
// steps in a row. The last step is never folded.
func runs(steps []Step) []run {
	var out []run
	for i := 0; i < len(steps); {
		j := i
		for j < len(steps)-1 && noop(steps[j]) {
			j++
		}
		if j-i >= minFold {
			out = append(out, run{From: i, To: j - 1, Fold: true})
			i = j
			continue
		}
		out = append(out, run{From: i, To: i})
		i++
	}
	return out
}
