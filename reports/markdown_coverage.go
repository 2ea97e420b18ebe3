package reports

import (
	"slices"
	"strings"
)

// markdownNetwork is the step contract's coverage table: network faults
// per kind, broker faults and crashes.
func (r *Report) markdownNetwork(p func(string, ...any)) {
	p("| fault | injected | struck | affected |")
	p("|---|---|---|---|")
	for _, k := range slices.Sorted(mapKeys(r.Coverage.Network)) {
		c := r.Coverage.Network[k]
		note := ""
		if c.Injected > 0 && c.Struck == 0 {
			note = " **(never struck)**"
		}
		p("| %s%s | %d | %d | %d |", k, note, c.Injected, c.Struck, c.Affected)
	}
	p("| broker: refused | %d | | |", r.Coverage.BrokerRefused)
	p("| broker: ack lost | %d | | |", r.Coverage.BrokerAckLost)
	p("| broker: duplicate publishes | %d | | |", r.Coverage.BrokerDuplicates)
	if r.Coverage.BrokerStoredTwice > 0 || r.Environment.Broker != "" {
		p("| broker: stored twice (JetStream, past its dedupe window) | %d | | |", r.Coverage.BrokerStoredTwice)
	}
	for _, k := range slices.Sorted(mapKeys(r.Coverage.Crashes)) {
		p("| crash: %s | %d | | |", strings.ReplaceAll(k, "_", " "), r.Coverage.Crashes[k])
	}
}

// markdownFaults is the coverage table of a contract that counts every
// kind of its nemesis per place, with what never happened called out.
func (r *Report) markdownFaults(p func(string, ...any)) {
	p("| fault | where | injected | struck | affected | what it counts |")
	p("|---|---|---|---|---|---|")
	for _, f := range faultRows(r.Coverage.Faults) {
		flag, note := "", ""
		if f.Flag != "" {
			flag = " **(" + f.Flag + ")**"
		}
		if f.First {
			note = cell(f.Note)
		}
		p("| %s | %s%s | %d | %d | %d | %s |", f.Kind, cell(f.Place), flag, f.Injected, f.Struck, f.Affected, note)
	}
	never, idle := neverHappened(r.Coverage.Faults)
	if len(idle) > 0 {
		p("")
		p("**Injected but never struck**: %s.", strings.Join(idle, ", "))
	}
	if len(never) > 0 {
		p("")
		p("**Never drawn**: %s.", strings.Join(never, ", "))
	}
}
