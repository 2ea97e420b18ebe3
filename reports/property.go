package reports

import (
	"fmt"
	"slices"
	"strings"

	"github.com/outboxcheck/outboxcheck/harness"
)

// When says when p's check runs, for the "checked" column.
func (p Property) When() string {
	if p.Checked != "" {
		return p.Checked
	}
	if p.Kind == "liveness" {
		return "after the drain"
	}
	return "after every action"
}

// JudgedText says how often p was judged ("12 steps", "0 probes"), or ""
// where the run did not count it.
func (p Property) JudgedText() string {
	if p.Judged == nil {
		return ""
	}
	return harness.Count(*p.Judged, p.Unit)
}

// VerdictText is p's verdict in words, with why where it is not a plain
// held or violated: "not judged: no wedge caught a relay".
func (p Property) VerdictText() string {
	v := words(p.Verdict)
	if p.Detail != "" && p.Verdict != Violated {
		v += ": " + p.Detail
	}
	return v
}

// judgedCounted reports whether any property of ps counts its
// judgements (the report then has a "judged" column).
func judgedCounted(ps []Property) bool {
	for _, p := range ps {
		if p.Judged != nil {
			return true
		}
	}
	return false
}

// fromRecords builds the verdicts from a contract's own records (the loop
// contract's): violated for the failing property; not applicable where
// its guarantee is not declared; not judged where nothing put it to the
// test; held otherwise. The run's verdict decides first: after an
// infrastructure or subject error nothing was checked.
func fromRecords(verdict string, f *harness.Failure, recs []harness.PropertyRecord) []Property {
	var out []Property
	for _, r := range recs {
		n := r.Judged
		p := Property{Name: r.Name, Kind: r.Kind, Checked: r.Checked, Unit: r.Unit, Verdict: Held}
		if r.Unit != "" {
			p.Judged = &n
		}
		switch {
		case verdict == Infrastructure, verdict == SubjectError:
			p.Verdict = NotChecked
		case f != nil && !f.Infrastructure && !f.Panic && f.Property == r.Name:
			p.Verdict, p.Detail = Violated, f.Message
		case r.NotApplicable != "":
			p.Verdict, p.Detail = NotApplicable, r.NotApplicable
		case r.Judged == 0:
			p.Verdict, p.Detail = NotJudged, r.NotJudged
		}
		out = append(out, p)
	}
	return out
}

// faultsNotApplicable lists the keys of Coverage.NotApplicable that are
// not properties, sorted: a property's own row already says why it does
// not apply.
func (r *Report) faultsNotApplicable() []string {
	var out []string
	for _, k := range slices.Sorted(mapKeys(r.Coverage.NotApplicable)) {
		if !slices.ContainsFunc(r.Properties, func(p Property) bool { return p.Name == k }) {
			out = append(out, k)
		}
	}
	return out
}

// outcomeCounts counts payments by outcome: "83 lost, 2 pending".
func outcomeCounts(ps []PaymentOutcome) string {
	n, order := map[string]int{}, []string{}
	for _, p := range ps {
		if n[p.Outcome]++; n[p.Outcome] == 1 {
			order = append(order, p.Outcome)
		}
	}
	var out []string
	for _, o := range order {
		out = append(out, fmt.Sprintf("%d %s", n[o], o))
	}
	return strings.Join(out, ", ")
}
