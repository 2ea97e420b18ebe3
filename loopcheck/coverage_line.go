package loopcheck

import (
	"fmt"
	"strings"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// Coverage is one line of what the run did: schedules and steps, then
// every kind of fault, injected/struck, with the kinds never drawn and
// the ones injected somewhere but never struck there called out.
func (r Result) Coverage() string {
	s := fmt.Sprintf("%s (%s, %s) in %v, %d at a time", harness.Count(r.Checks, "schedules"), harness.Count(r.Steps, "steps"), harness.Count(r.ShrinkRuns, "shrink runs"), r.Elapsed.Round(time.Second), max(r.Parallel, 1))
	if r.ParallelNote != "" {
		s += " (" + r.ParallelNote + ")"
	}
	drawn, never, idle := coverageWords(r.Nemesis)
	if len(drawn) > 0 {
		s += "; faults injected/struck: " + strings.Join(drawn, ", ")
	}
	if len(never) > 0 {
		s += "; never drawn: " + strings.Join(never, ", ")
	}
	if len(idle) > 0 {
		s += "; INJECTED BUT NEVER STRUCK: " + strings.Join(idle, ", ")
	}
	s += fmt.Sprintf("; broker down %v in all; publishes after death %d (refused); duplicate publishes %d", r.Loop.Downtime.Round(time.Millisecond), r.Loop.Zombies, r.Broker.Duplicates)
	if r.Options.JetStream {
		s += fmt.Sprintf("; JetStream: stored twice %d (retries past its %v dedupe window)", r.Broker.StoredTwice, r.Options.withDefaults().DedupeWindow)
	}
	if r.Slots.MaxRetained > 0 {
		s += fmt.Sprintf("; replication slot %s retained up to %s of WAL", r.Slots.Slot, harness.Bytes(r.Slots.MaxRetained))
	}
	if r.Loop.Stuck > 0 {
		s += fmt.Sprintf("; %d killed incarnations never returned from Dispatch", r.Loop.Stuck)
	}
	o := r.Options.withDefaults()
	return s + fmt.Sprintf("; after healing, waits up to %v without progress, %v in all", o.Recovery, o.HardBound())
}

// coverageWords sums each kind over its places ("kill 3/2"), and lists
// the kinds never drawn and the places where a kind was injected but
// never struck ("sever on dispatcher-1").
func coverageWords(rows []harness.FaultCount) (drawn, never, idle []string) {
	injected, struck, order := map[string]int{}, map[string]int{}, []string{}
	for _, f := range rows {
		if _, seen := injected[f.Kind]; !seen {
			order = append(order, f.Kind)
		}
		injected[f.Kind] += f.Injected
		struck[f.Kind] += f.Struck
		if f.NeverStruck() {
			idle = append(idle, f.Kind+" on "+f.Where)
		}
	}
	for _, k := range order {
		if injected[k] == 0 {
			never = append(never, k)
		} else {
			drawn = append(drawn, fmt.Sprintf("%s %d/%d", k, injected[k], struck[k]))
		}
	}
	return drawn, never, idle
}
