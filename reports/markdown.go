package reports

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/outboxcheck/outboxcheck/harness"
)

// Markdown renders the report for a pull request or an audit file.
func (r *Report) Markdown(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("# outboxcheck: %s — %s", r.Subject, strings.ToUpper(r.Verdict))
	p("")
	if r.Message != "" {
		p("> %s", oneLine(r.Message))
		p("")
	}
	p("| | |")
	p("|---|---|")
	p("| subject | `%s` |", r.Subject)
	p("| checks | %d (+%d replayed while shrinking), %d steps, %.0f steps/s |", r.Checks, r.ShrinkRuns, r.Steps, r.StepsPerSecond)
	p("| seed | %d |", r.Seed)
	if r.Shard != "" {
		p("| shard | %s |", r.Shard)
	}
	if len(r.Merged) > 0 {
		p("| merged shards | %s |", strings.Join(r.Merged, ", "))
	}
	p("| faults | %v; concurrent actors %v |", r.Faults, r.Concurrent)
	p("| started | %s, %.1f s |", r.Started.UTC().Format("2006-01-02 15:04:05 UTC"), r.Seconds)
	p("| PostgreSQL | %s (%s) |", r.Environment.Postgres, r.Environment.PostgresSource)
	p("| server settings not at their defaults | %s |", cell(settingsText(r.Environment.ServerSettings)))
	if r.Environment.Broker != "" {
		p("| broker | %s |", cell(r.Environment.Broker))
	}
	p("| Go, OS | %s, %s |", r.Environment.Go, r.Environment.OS)
	p("| outboxcheck | %s |", r.Environment.Tool)
	p("| command | `outboxcheck run %s` |", strings.Join(r.Args, " "))
	p("")
	p("## Properties")
	p("")
	counted := judgedCounted(r.Properties)
	if counted {
		p("| property | checked | judged | verdict |")
		p("|---|---|---|---|")
	} else {
		p("| property | checked | verdict |")
		p("|---|---|---|")
	}
	for _, pr := range r.Properties {
		v := cell(pr.VerdictText())
		switch pr.Verdict {
		case Violated:
			v = "**VIOLATED**"
		case NotJudged:
			v = "**not judged**: " + cell(pr.Detail)
		}
		if counted {
			p("| `%s` | %s | %s | %s |", pr.Name, pr.When(), pr.JudgedText(), v)
		} else {
			p("| `%s` | %s | %s |", pr.Name, pr.When(), v)
		}
	}
	p("")
	p("## Fault coverage")
	p("")
	if len(r.Coverage.Faults) > 0 {
		r.markdownFaults(p)
		p("")
		p("Duplicate publishes (the broker accepted an event it already had: at-least-once publishing, absorbed by the consumer's dedupe, and a violation only where the subject declares publish-at-most-once): %d.", r.Coverage.BrokerDuplicates)
		if r.Coverage.BrokerStoredTwice > 0 || r.Environment.Broker != "" {
			p("")
			p("Stored twice (a real broker's stream held an event again: a retry that came after its dedupe window, which a consumer without an inbox would apply again): %d.", r.Coverage.BrokerStoredTwice)
		}
		if r.Coverage.SlotRetainedMax > 0 {
			p("")
			p("%s.", r.Coverage.SlotText())
		}
	} else {
		r.markdownNetwork(p)
	}
	for _, k := range r.faultsNotApplicable() {
		p("")
		p("Not applicable: `%s`: %s.", k, r.Coverage.NotApplicable[k])
	}
	for _, k := range slices.Sorted(mapKeys(r.Coverage.NeverSucceeded)) {
		p("")
		p("**Called but never succeeded**: `%s`: %s.", k, r.Coverage.NeverSucceeded[k])
	}
	if ce := r.Failure; ce != nil {
		p("")
		if ce.Operation != "" {
			p("## Where %s first failed (%s)", ce.Operation, harness.Count(ce.StepCount(), "steps"))
		} else {
			p("## Counterexample (%s, first failed at check %d)", harness.Count(ce.StepCount(), "steps"), ce.FirstCheck)
		}
		p("")
		p("| # | clock | action | actor | input | actual | model |")
		p("|---|---|---|---|---|---|---|")
		for _, s := range ce.Steps {
			p("| %s | %s | %s | %s | %s | %s | %s |", s.Num(), s.Clock, s.Action, s.Actor, cell(s.Input), cell(s.Result), cell(s.Expect))
		}
		p("")
		if n := len(ce.Payments); n > 0 {
			p("Every committed payment's outcome at the failing end state (%s) is in report.json, `counterexample.payments`.", outcomeCounts(ce.Payments))
			p("")
		}
		switch {
		case r.Contract == LoopContract:
			p("Run its schedule again: `outboxcheck replay <this directory> --times N` (real time: it says how often it came back).")
		case ce.Operation == "" || ce.FailFile != "":
			p("Replay it step by step: `outboxcheck replay <this directory>`.")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func cell(s string) string { return strings.ReplaceAll(oneLine(s), "|", `\|`) }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// settingsText lists settings as name=value, sorted by name.
func settingsText(m map[string]string) string {
	switch {
	case m == nil:
		return "not recorded"
	case len(m) == 0:
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ", ")
}
