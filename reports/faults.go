package reports

// faultRow is a row of the coverage table as a page shows it: the kind's
// note on its first row only, the place "—" where it has none, and a
// flag for what never happened.
type faultRow struct {
	FaultCoverage
	Place, Flag string
	First       bool // the kind's first row: it carries the note
}

// faultRows lays out the coverage table of fs.
func faultRows(fs []FaultCoverage) []faultRow {
	var out []faultRow
	for i, f := range fs {
		r := faultRow{FaultCoverage: f, Place: f.Where, First: i == 0 || fs[i-1].Kind != f.Kind}
		if r.Place == "" {
			r.Place = "—"
		}
		switch {
		case f.NeverStruck():
			r.Flag = "never struck"
		case f.NeverDrawn():
			r.Flag = "never drawn"
		}
		out = append(out, r)
	}
	return out
}

// neverHappened lists the kinds no fault of which was put on anywhere
// (never), and the places where a kind was put on but never took effect
// (idle: "sever on dispatcher-1"), for the callouts under the table.
func neverHappened(fs []FaultCoverage) (never, idle []string) {
	drawn := map[string]bool{}
	for _, f := range fs {
		drawn[f.Kind] = drawn[f.Kind] || f.Injected > 0
	}
	for _, f := range fs {
		switch {
		case f.NeverStruck():
			idle = append(idle, f.Kind+" on "+f.Where)
		case !drawn[f.Kind] && (len(never) == 0 || never[len(never)-1] != f.Kind):
			never = append(never, f.Kind)
		}
	}
	return never, idle
}
