package reports

import (
	"errors"
	"fmt"
	"slices"
)

// Merge combines the reports of one sharded run: every shard i/n of it
// once, of one contract and subject, or an error that says which is not
// (see oneRun). The verdict is the worst
// (a violation over a panic over a subject error over an infrastructure
// error over an interrupt over a pass); counts
// and coverage add up; the counterexample is the first shard's that has one.
func Merge(rs []*Report) (*Report, error) {
	if len(rs) == 0 {
		return nil, errors.New("nothing to merge")
	}
	rs = slices.Clone(rs)
	slices.SortStableFunc(rs, func(a, b *Report) int { return compareShard(a.Shard, b.Shard) })
	if err := oneRun(rs); err != nil {
		return nil, err
	}
	first := rs[0]
	m := &Report{Schema: Schema, Environment: first.Environment, Contract: first.Contract, Subject: first.Subject, Args: first.Args,
		Seed: first.Seed, Faults: first.Faults, Concurrent: first.Concurrent, Started: first.Started, Verdict: Pass,
		Coverage: Coverage{Network: map[string]KindCoverage{}, Crashes: map[string]int{}, NotApplicable: map[string]string{}}}
	props := map[string]int{}
	for _, r := range rs {
		m.Merged = append(m.Merged, r.Shard)
		if r.Started.Before(m.Started) {
			m.Started = r.Started
		}
		m.Seconds = max(m.Seconds, r.Seconds)
		m.Checks += r.Checks
		m.ShrinkRuns += r.ShrinkRuns
		m.Steps += r.Steps
		m.StepsPerSecond += r.StepsPerSecond // shards run side by side
		m.Interrupted = m.Interrupted || r.Interrupted
		if rank(r.Verdict) > rank(m.Verdict) {
			m.Verdict, m.Message = r.Verdict, r.Message
		}
		if m.Failure == nil && r.Failure != nil && (r.Verdict == Violation || r.Verdict == Panic || r.Verdict == SubjectError) {
			m.Failure = r.Failure // its fail file is relative to that shard's directory
		}
		for k, c := range r.Coverage.Network {
			t := m.Coverage.Network[k]
			t.Injected, t.Struck, t.Affected = t.Injected+c.Injected, t.Struck+c.Struck, t.Affected+c.Affected
			m.Coverage.Network[k] = t
		}
		for k, n := range r.Coverage.Crashes {
			m.Coverage.Crashes[k] += n
		}
		for k, why := range r.Coverage.NotApplicable {
			m.Coverage.NotApplicable[k] = why
		}
		m.Coverage.Faults = addFaults(m.Coverage.Faults, r.Coverage.Faults)
		m.Coverage.BrokerRefused += r.Coverage.BrokerRefused
		m.Coverage.BrokerAckLost += r.Coverage.BrokerAckLost
		m.Coverage.BrokerDuplicates += r.Coverage.BrokerDuplicates
		m.Coverage.BrokerStoredTwice += r.Coverage.BrokerStoredTwice
		if r.Coverage.SlotRetainedMax > m.Coverage.SlotRetainedMax {
			m.Coverage.SlotRetainedMax, m.Coverage.SlotRetained = r.Coverage.SlotRetainedMax, r.Coverage.SlotRetained
		}
		for _, p := range r.Properties {
			i, ok := props[p.Name]
			if !ok {
				props[p.Name] = len(m.Properties)
				m.Properties = append(m.Properties, p)
				continue
			}
			judged := addJudged(m.Properties[i].Judged, p.Judged)
			if propRank(p.Verdict) > propRank(m.Properties[i].Verdict) {
				m.Properties[i] = p
			}
			m.Properties[i].Judged = judged
		}
	}
	if m.Failure != nil {
		m.Failure = &Counterexample{Property: m.Failure.Property, Operation: m.Failure.Operation, Message: m.Failure.Message,
			FirstCheck: m.Failure.FirstCheck, Steps: m.Failure.Steps, Payments: m.Failure.Payments} // replay it from its shard's report
	}
	return m, nil
}

func rank(v string) int {
	return map[string]int{Pass: 0, Interrupted: 1, Infrastructure: 2, SubjectError: 3, Panic: 4, Violation: 5}[v]
}

// propRank orders verdicts for a merge: a property one shard judged and
// held is held, though another never judged it.
func propRank(v string) int {
	return map[string]int{NotJudged: -1, Held: 0, NotApplicable: 1, NotChecked: 2, Violated: 3}[v]
}

// addJudged adds two shards' judgement counts; nil where neither counted.
func addJudged(a, b *int) *int {
	if a == nil && b == nil {
		return nil
	}
	n := 0
	for _, c := range []*int{a, b} {
		if c != nil {
			n += *c
		}
	}
	return &n
}

func compareShard(a, b string) int {
	var ai, an, bi, bn int
	fmt.Sscanf(a, "%d/%d", &ai, &an)
	fmt.Sscanf(b, "%d/%d", &bi, &bn)
	return ai - bi
}

// addFaults adds b's rows to a's, by kind and place; a row of b that a
// lacks goes after a's last row of its kind. A kind drawn somewhere loses
// its row of zeros.
func addFaults(a, b []FaultCoverage) []FaultCoverage {
	out := slices.Clone(a)
	for _, f := range b {
		if i := slices.IndexFunc(out, func(g FaultCoverage) bool { return g.Kind == f.Kind && g.Where == f.Where }); i >= 0 {
			out[i].Injected += f.Injected
			out[i].Struck += f.Struck
			out[i].Affected += f.Affected
			continue
		}
		at := len(out)
		for i, g := range out {
			if g.Kind == f.Kind {
				at = i + 1
			}
		}
		out = slices.Insert(out, at, f)
	}
	drawn := map[string]bool{}
	for _, f := range out {
		drawn[f.Kind] = drawn[f.Kind] || f.Injected > 0
	}
	return slices.DeleteFunc(out, func(f FaultCoverage) bool { return f.Where == "" && f.NeverDrawn() && drawn[f.Kind] })
}
