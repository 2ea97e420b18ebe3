package reports

import (
	"fmt"
	"maps"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/model"
)

// Fill sets r's outcome from a run's summary: verdict, properties,
// coverage and counterexample.
func (r *Report) Fill(sum harness.Summary) {
	r.Schema = Schema
	r.Checks, r.ShrinkRuns = sum.Checks, sum.ShrinkRuns
	r.Coverage = Coverage{
		Network:       map[string]KindCoverage{},
		BrokerRefused: sum.Broker.Refused, BrokerAckLost: sum.Broker.AckLost, BrokerDuplicates: sum.Broker.Duplicates,
		BrokerStoredTwice: sum.Broker.StoredTwice,
		SlotRetainedMax:   sum.Slots.MaxRetained, SlotRetained: sum.Slots.Slot,
		Crashes: map[string]int{
			"dispatcher": sum.Crashes.Dispatcher, "dispatcher_mid_mark": sum.Crashes.DispatcherMidMark,
			"consumer_scheduled": sum.Crashes.ConsumerScheduled, "consumer_reached": sum.Crashes.ConsumerReached,
			"database": sum.Crashes.Database,
		},
		NotApplicable:  maps.Clone(sum.NotApplicable),
		NeverSucceeded: sum.NeverSucceeded(),
	}
	for k, c := range sum.Network {
		r.Coverage.Network[string(k)] = KindCoverage{Injected: c.Injected, Struck: c.Struck, Affected: c.Affected}
	}
	for _, f := range sum.Nemesis {
		r.Coverage.Faults = append(r.Coverage.Faults, FaultCoverage{Kind: f.Kind, Where: f.Where, Injected: f.Injected,
			Struck: f.Struck, Affected: f.Affected, Note: f.Note})
	}
	f := sum.Failure
	r.Interrupted = sum.Interrupted
	switch {
	case f == nil && sum.Interrupted:
		r.Verdict, r.Message = Interrupted, fmt.Sprintf("interrupted after %d checks; every check that ran to its end passed", sum.Checks)
	case f == nil:
		r.Verdict = Pass
	case f.Infrastructure:
		r.Verdict, r.Message = Infrastructure, f.Message
	case f.Panic:
		r.Verdict, r.Message = Panic, f.Message
	case f.SubjectError:
		r.Verdict, r.Message = SubjectError, "subject error: "+f.Message
	default:
		r.Verdict, r.Message = Violation, "property violated: "+f.Property+": "+f.Message
		if sum.Interrupted {
			r.Message += " (interrupted while shrinking: the counterexample is shrunk as far as it got)"
		}
	}
	if f != nil && f.History != nil && len(f.History.Entries) > 0 {
		ce := &Counterexample{Property: f.Property, Operation: f.Operation, Message: f.Message}
		if sum.First != nil {
			ce.FirstCheck, ce.FirstAt = sum.First.Check, seconds(sum.First.Elapsed)
		}
		for _, e := range f.History.Entries {
			ce.Steps = append(ce.Steps, Step{N: e.Step, Clock: e.Clock.Format("15:04:05.000000"), Action: e.Action,
				Actor: e.Actor, Input: e.Input, Result: e.Result, Expect: e.Expect,
				Outcome: e.Outcome, Broker: e.Broker, Model: e.Model, Rows: e.Rows})
		}
		for _, o := range sum.Outcomes {
			ce.Payments = append(ce.Payments, PaymentOutcome{Payment: o.Payment, Outcome: o.Outcome, Why: o.Why})
		}
		r.Failure = ce
	}
	if sum.Properties != nil {
		r.Properties = fromRecords(r.Verdict, f, sum.Properties)
	} else {
		r.Properties = verdicts(r.Verdict, f)
		for i, p := range r.Properties {
			if why := sum.NotApplicable[p.Name]; why != "" && p.Verdict != Violated {
				r.Properties[i].Verdict, r.Properties[i].Detail = NotApplicable, why
			}
		}
	}
	r.fillProgress(sum)
}

// fillProgress copies the run's checkpoints and its shrinking span.
func (r *Report) fillProgress(sum harness.Summary) {
	r.Progress = nil
	for _, c := range sum.Progress {
		r.Progress = append(r.Progress, Checkpoint{Check: c.Check, At: seconds(c.Elapsed), Steps: c.Steps, Faults: c.Faults, Struck: c.Struck})
	}
	r.Shrinking = nil
	if sum.First != nil && sum.ShrinkEnd > 0 {
		r.Shrinking = &Span{From: seconds(sum.First.Elapsed), To: seconds(sum.ShrinkEnd)}
	}
}

// seconds is d in seconds, to the millisecond: the plot needs no more.
func seconds(d time.Duration) float64 { return float64(d.Milliseconds()) / 1000 }

func verdicts(verdict string, f *harness.Failure) []Property {
	var out []Property
	add := func(names []string, kind string) {
		for _, n := range names {
			p := Property{Name: n, Kind: kind, Checked: map[string]string{"safety": "after every action", "liveness": "after the drain"}[kind], Verdict: Held}
			switch {
			case verdict == Infrastructure, verdict == SubjectError:
				p.Verdict = NotChecked
			case f != nil && !f.Infrastructure && !f.Panic && f.Property == n:
				p.Verdict, p.Detail = Violated, f.Message
			case verdict != Pass:
				// The run stopped at the first violation: the others held
				// for every step it took.
			}
			out = append(out, p)
		}
	}
	add(model.SafetyProperties, "safety")
	add(model.LivenessProperties, "liveness")
	return out
}
