package loopcheck

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/outboxcheck/outboxcheck/harness"
)

// judged counts one schedule's judgements of each property: after its
// steps, per probe, and at its end (where each reading of the end state
// replaces the last: the count is of the reading that decided).
// Used from the schedule's own goroutine only.
type judged struct {
	steps map[string]int
	end   map[string]int
	// endRead: the schedule's end state was read (and judged, up to the
	// first property it failed).
	endRead bool
}

// step counts a judgement of property p after a step (or per probe).
func (j *judged) step(p string) {
	if j.steps == nil {
		j.steps = map[string]int{}
	}
	j.steps[p]++
}

// atEnd notes that a reading of the end state judged property p on n
// things (end states: 1; retries; poisoned events).
func (j *judged) atEnd(p string, n int) {
	if j.end == nil {
		j.end = map[string]int{}
	}
	j.end[p] = n
}

// fold adds a schedule's judgements to the run's.
func (t *tally) fold(j judged) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.judged == nil {
		t.judged = map[string]int{}
	}
	for p, n := range j.steps {
		t.judged[p] += n
	}
	for p, n := range j.end {
		t.judged[p] += n
	}
	if j.endRead {
		t.endsRead++
	}
}

// unprobed counts a wedge whose relay-isolation probe was not judged, by
// why.
func (t *tally) unprobed(why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.unprobedWhy == nil {
		t.unprobedWhy = map[string]int{}
	}
	t.unprobedWhy[why]++
}

// records says, for every property of the catalogue, how it was checked
// over the run, how often, and why not; notApplicable are the reasons a
// property cannot apply to the subject. The caller holds t.mu.
func (t *tally) records(notApplicable map[string]string) []harness.PropertyRecord {
	var out []harness.PropertyRecord
	for _, p := range catalogue {
		r := harness.PropertyRecord{Name: p.name, Kind: kindOf(p.name), Checked: p.checked, Unit: p.unit,
			Judged: t.judged[p.name], NotApplicable: notApplicable[p.name]}
		if why, ok := loopOnly[p.name]; ok {
			r.NotApplicable = why
		}
		if r.Judged == 0 && r.NotApplicable == "" {
			r.NotJudged = p.never
			switch {
			case p.name == "relay-isolation":
				r.NotJudged = t.whyUnprobed()
			case p.never == noEnd && t.endsRead > 0:
				r.NotJudged = fmt.Sprintf("each of the %d end states read failed an earlier property before this one was judged", t.endsRead)
				if t.endsRead == 1 {
					r.NotJudged = "the one end state read failed an earlier property before this one was judged"
				}
			}
		}
		out = append(out, r)
	}
	return out
}

// whyUnprobed says why relay-isolation was never judged: no wedge caught
// a relay, or every probe found what a correct outbox need not pass.
func (t *tally) whyUnprobed() string {
	switch {
	case t.wedgeSteps == 0:
		return "no wedge step was drawn, so nothing was probed"
	case t.wedges == 0:
		return fmt.Sprintf("none of %d wedge steps caught a relay mid-publish, so nothing was probed", t.wedgeSteps)
	}
	var why []string
	for _, k := range slices.Sorted(maps.Keys(t.unprobedWhy)) {
		why = append(why, fmt.Sprintf("%s (%d)", k, t.unprobedWhy[k]))
	}
	relays := "relays"
	if t.wedges == 1 {
		relays = "relay"
	}
	return fmt.Sprintf("%d %s wedged, no probe judged: %s", t.wedges, relays, strings.Join(why, "; "))
}
