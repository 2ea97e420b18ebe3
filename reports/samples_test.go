package reports

import (
	"fmt"
	"time"
)

// passSample is a run where every property held.
func passSample() *Report {
	r := sample()
	r.Verdict, r.Message, r.Failure = Pass, "", nil
	r.Properties = []Property{{Name: "fencing", Kind: "safety", Verdict: Held}, {Name: "no-loss", Kind: "liveness", Verdict: Held}}
	r.Coverage.Crashes = map[string]int{"consumer_reached": 2, "dispatcher_mid_mark": 1}
	return r
}

// stillSample is a fault-free failure whose harness clock never moves,
// with runs of no-op steps, and statuses from the model and the
// database, which part at the failing step.
func stillSample() *Report {
	r := sample()
	r.Faults = false
	r.Coverage = Coverage{Network: map[string]KindCoverage{}, Crashes: map[string]int{"consumer_reached": 0}}
	e1, e2 := "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000004"
	st := func(a, b string) map[string]string { return map[string]string{e1: a, e2: b} }
	steps := []Step{
		{Action: "Commit", Actor: "producer", Input: "pay-1", Result: "event " + e1, Outcome: "ok", Model: st("PENDING", "")},
		{Action: "Cleanup", Actor: "operator", Input: "retention 0s", Result: "deleted 0", Outcome: "ok"},
		{Action: "Claim", Actor: "dispatcher-1", Input: "limit 1", Result: "claimed []", Outcome: "ok"},
		{Action: "Redrive", Actor: "operator", Input: e1, Result: "changed=false", Outcome: "ok"},
		{Action: "Claim", Actor: "dispatcher-0", Input: "limit 1", Result: "claimed [" + e1 + "(claim …02)]", Outcome: "ok", Model: st("PUBLISHING", "")},
		{Action: "Commit", Actor: "producer", Input: "pay-2", Result: "event " + e2, Outcome: "ok", Model: st("PUBLISHING", "PENDING")},
		{Action: "Publish", Actor: "dispatcher-0", Input: e1, Result: "error: broker refused the publish", Outcome: "failed"},
		{Action: "CrashDispatcher", Actor: "dispatcher-1", Input: "forgets 0 claims"},
		{Action: "Cleanup", Actor: "operator", Input: "retention 0s", Result: "deleted 0", Outcome: "ok"},
		{Action: "Claim", Actor: "dispatcher-1", Input: "limit 1", Result: "error: timeout (outcome unknown)", Outcome: "unknown", Model: st("PUBLISHING", "PENDING|PUBLISHING")},
		{Action: "Publish", Actor: "dispatcher-0", Input: e1, Result: "acknowledged", Outcome: "ok", Broker: []string{e1}, Model: st("PUBLISHING", "PUBLISHING")},
		{Action: "Deliver", Actor: "consumer-0", Input: "message #1 " + e1, Result: "acknowledged", Outcome: "ok"},
		{Action: "MarkPublished", Actor: "dispatcher-1", Input: e1 + " (claim …03)", Result: "changed=true", Outcome: "ok",
			Expect: "[fencing] mark with stale claim_id changed the row", Model: st("PUBLISHING", "PUBLISHING")},
	}
	for i := range steps {
		steps[i].N, steps[i].Clock = i+1, "00:00:00.000000"
		if steps[i].Model == nil && i > 0 {
			steps[i].Model = steps[i-1].Model
		}
		steps[i].Rows = steps[i].Model
	}
	last := &steps[len(steps)-1]
	last.Rows = st("PUBLISHED", "PUBLISHING")
	r.Failure = &Counterexample{Property: "fencing", Message: "mark with stale claim_id changed the row", FirstCheck: 3, Steps: steps}
	r.Message = "property violated: fencing: mark with stale claim_id changed the row"
	return r
}

// longSample is a faulted failure of 90 steps, most of them no-ops, with
// a partition, a crash and a clock that moves now and then.
func longSample() *Report {
	r := sample()
	e1 := "00000000-0000-4000-8000-000000000001"
	clock := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)
	var steps []Step
	add := func(s Step) {
		s.N, s.Clock = len(steps)+1, clock.Format("15:04:05.000000")
		steps = append(steps, s)
	}
	add(Step{Action: "Commit", Actor: "producer", Input: "pay-1", Result: "event " + e1, Outcome: "ok"})
	add(Step{Action: "Partition", Actor: "dispatcher-0", Input: "lost-reply at the next COMMIT"})
	for i := range 80 {
		switch i % 10 {
		case 3:
			clock = clock.Add(time.Minute)
			add(Step{Action: "AdvanceClock", Actor: "operator", Input: "+1m0s"})
		case 7:
			add(Step{Action: "Claim", Actor: fmt.Sprintf("dispatcher-%d", i%2), Input: "limit 1", Result: "error: conn reset (outcome unknown)", Outcome: "unknown"})
		default:
			add(Step{Action: "Cleanup", Actor: "operator", Input: "retention 0s", Result: "deleted 0", Outcome: "ok"})
		}
	}
	add(Step{Action: "Heal", Actor: "dispatcher-0"})
	add(Step{Action: "CrashDispatcher", Actor: "dispatcher-1", Input: "forgets 1 claims"})
	add(Step{Action: "Claim", Actor: "dispatcher-0", Input: "limit 1", Result: "claimed [" + e1 + "]", Outcome: "ok"})
	add(Step{Action: "Publish", Actor: "dispatcher-0", Input: e1, Result: "acknowledged", Outcome: "ok", Broker: []string{e1}})
	add(Step{Action: "MarkPublished", Actor: "dispatcher-0", Input: e1, Result: "changed=true", Outcome: "ok",
		Expect: "[fencing] mark with stale claim_id changed the row"})
	for i := range steps {
		steps[i].Model = map[string]string{e1: "PENDING"}
		steps[i].Rows = steps[i].Model
	}
	steps[len(steps)-1].Rows = map[string]string{e1: "PUBLISHED"}
	r.Failure = &Counterexample{Property: "fencing", Message: "mark with stale claim_id changed the row", FirstCheck: 7, Steps: steps}
	return r
}

// progressSample is sample's failure after a long run: 40 checks of
// varying length and faults, then shrinking.
func progressSample() *Report {
	r := sample()
	at, faults, struck := 0.0, 0, 0
	for i := range 40 {
		at += 0.2 + float64(i%7)*0.15
		faults += i % 4
		struck += (i % 4) / 2
		r.Progress = append(r.Progress, Checkpoint{Check: i + 1, At: at, Steps: 20 + i%9*5, Faults: faults, Struck: struck})
	}
	r.Failure.FirstCheck = 40
	r.ShrinkRuns = 120
	r.Shrinking = &Span{From: at, To: at + 6}
	return r
}
