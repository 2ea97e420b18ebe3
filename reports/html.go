package reports

import (
	_ "embed"
	"html/template"
	"io"
	"strings"

	"github.com/outboxcheck/outboxcheck/harness"
)

//go:embed page.html.tmpl
var pageSource string

// HTML renders a self-contained page: no scripts, fonts or images from the
// network. The counterexample's timeline is inline SVG with its details in
// <title> tooltips; one inline script scrolls it to the failing step. A
// run of a few checks or more also gets a plot of its rate and faults
// over time (ratePlot).
func (r *Report) HTML(w io.Writer) error {
	data := struct {
		*Report
		Timeline *timeline
		Rate     *ratePlot
		Story    []storyRow
		Folded   int
		Upper    string
		// JudgedCounted: the properties table has a "judged" column.
		JudgedCounted       bool
		FaultsNotApplicable []string
		// FaultRows is the coverage table of a contract that counts
		// every kind per place; Never and Idle, what never happened.
		FaultRows   []faultRow
		Never, Idle []string
	}{Report: r, Upper: strings.ToUpper(words(r.Verdict)), Rate: newRatePlot(r),
		JudgedCounted: judgedCounted(r.Properties), FaultsNotApplicable: r.faultsNotApplicable(),
		FaultRows: faultRows(r.Coverage.Faults)}
	data.Never, data.Idle = neverHappened(r.Coverage.Faults)
	if r.Failure != nil && len(r.Failure.Steps) > 0 {
		t := newTimeline(r.Failure.Steps)
		data.Timeline = &t
		data.Story = storyRows(r.Failure.Steps)
		for _, row := range data.Story {
			if row.Fold {
				data.Folded += len(row.Steps)
			}
		}
	}
	return page.Execute(w, data)
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"count":    harness.Count,
	"join":     strings.Join,
	"outcomes": outcomeCounts,
	"settings": settingsText,
	"words":    words,
}).Parse(pageSource))
