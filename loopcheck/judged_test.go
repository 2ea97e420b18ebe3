package loopcheck

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/properties"
)

// isolatedDead is a subject that declares relay isolation and shows its
// dead letters and pending events, so that every property applies.
type isolatedDead struct{ Subject }

func (isolatedDead) IsolationBound() time.Duration                 { return time.Second }
func (isolatedDead) DeadLetters(context.Context) ([]string, error) { return nil, nil }

func records(t *testing.T, r *runner) map[string]harness.PropertyRecord {
	t.Helper()
	r.net = faults.NewNet("127.0.0.1:1")
	defer r.net.Close()
	var sum harness.Summary
	r.summarize(&sum)
	out := map[string]harness.PropertyRecord{}
	for _, p := range sum.Properties {
		out[p.Name] = p
	}
	if len(out) != len(catalogue) {
		t.Fatalf("%d records for %d properties", len(out), len(catalogue))
	}
	return out
}

// A property nothing put to the test is recorded as judged zero times,
// with why: relay-isolation with wedges that probed nothing, an end-state
// property when no schedule reached its end. One that was judged says
// how often, in its unit.
func TestPropertiesNeverJudgedSayWhy(t *testing.T) {
	r := &runner{subj: isolatedDead{}, opts: Options{Dispatchers: 2}, tally: &tally{}}
	r.tally.wedgeSteps, r.tally.wedges = 3, 2
	r.tally.unprobed("no other relay runs on a healthy link")
	r.tally.unprobed("the broker is down")
	var j judged
	for range 7 {
		j.step("effect-at-most-once")
		j.step("relay-liveness")
	}
	r.tally.fold(j)
	recs := records(t, r)
	iso := recs["relay-isolation"]
	if iso.NotApplicable != "" || iso.Judged != 0 || iso.Unit != "probes" || iso.Checked != perProbe {
		t.Fatalf("relay-isolation: %+v", iso)
	}
	if want := "2 relays wedged, no probe judged: no other relay runs on a healthy link (1); the broker is down (1)"; iso.NotJudged != want {
		t.Fatalf("relay-isolation not judged because %q, want %q", iso.NotJudged, want)
	}
	if nl := recs["no-loss"]; nl.Judged != 0 || nl.NotJudged != noEnd || nl.Checked != atTheEnd {
		t.Fatalf("no-loss with no end state judged: %+v", nl)
	}
	r.tally.fold(judged{endRead: true, end: map[string]int{"no-loss": 1}})
	if tl := records(t, r)["effect-exactly-once"]; tl.Judged != 0 || tl.NotJudged != "the one end state read failed an earlier property before this one was judged" {
		t.Fatalf("effect-exactly-once behind a failing property: %+v", tl)
	}
	if am := recs["effect-at-most-once"]; am.Judged != 7 || am.Unit != "steps" || am.NotJudged != "" || am.Checked != afterEveryStep {
		t.Fatalf("effect-at-most-once after 7 steps: %+v", am)
	}
	if f := recs["fencing"]; !strings.Contains(f.NotApplicable, "ClaimReporter") || f.Checked != atTheEnd {
		t.Fatalf("fencing of a subject that reports no claims: %+v", f)
	}
	if f := recs["lease-exclusive"]; f.NotApplicable == "" || f.Checked != notByTheLoop {
		t.Fatalf("lease-exclusive: %+v", f)
	}
	r.tally.wedges = 1
	if why := records(t, r)["relay-isolation"].NotJudged; !strings.HasPrefix(why, "1 relay wedged,") {
		t.Fatalf("one wedge: %q", why)
	}
	r.tally.wedges = 0
	if why := records(t, r)["relay-isolation"].NotJudged; why != "none of 3 wedge steps caught a relay mid-publish, so nothing was probed" {
		t.Fatalf("no wedge caught: %q", why)
	}
}

// Each property's "checked" says when its check runs: the per-step ones
// after every step, relay-isolation per probe, the end-state ones at the
// end: never "after every action" for what is judged once, after the drain.
func TestCheckedSaysWhenEachCheckRuns(t *testing.T) {
	recs := records(t, &runner{subj: isolatedDead{}, opts: Options{Dispatchers: 2}, tally: &tally{}})
	want := map[string]string{"effect-at-most-once": afterEveryStep, "relay-liveness": afterEveryStep, "relay-isolation": perProbe,
		"no-phantom": atTheEnd, "backoff": atTheEnd, "dead-exclusive": atTheEnd, "dead-letter": atTheEnd,
		"no-loss": atTheEnd, "effect-exactly-once": atTheEnd, "timely-delivery": atTheEnd}
	for name, when := range want {
		if recs[name].Checked != when {
			t.Errorf("%s checked %q, want %q", name, recs[name].Checked, when)
		}
	}
}

// Every property a loop run reports is one of the catalogue's.
func TestLoopPropertiesAreTheCatalogues(t *testing.T) {
	for _, p := range catalogue {
		if _, ok := properties.Lookup(p.name); !ok {
			t.Errorf("%s is not in the property catalogue", p.name)
		}
	}
}
