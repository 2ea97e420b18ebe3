package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/impl/mutants"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// The report puts each figure next to its comparison from the same run:
// steps/s next to the bare SQL rate, the swarm draw's gate and times to
// kill next to the fixed draw's, long checks next to short ones.
func TestMarkdownComparesSideBySide(t *testing.T) {
	s := time.Second
	r := &Report{Seeds: 2, Budget: 30 * s, ClusterReady: []time.Duration{s},
		Bare:      Bare{Ops: 3000, Took: s},
		SameWork:  Bare{Ops: 1200, Took: s / 2},
		FaultFree: Throughput{Checks: 10, Steps: 1500, Took: s, Time: &harness.Timing{Total: s}},
		Faulted:   Throughput{Checks: 10, Steps: 750, Took: s},
		Lengths: []Length{{Average: 30, Throughput: Throughput{Checks: 70, Steps: 900, Took: s}},
			{Average: 3000, Throughput: Throughput{Checks: 1, Steps: 600, Took: s}}},
		Gates: []Gate{{Draw: stepcheck.DrawSwarm, Checks: 240, Steps: 12000, Took: 30 * s},
			{Draw: stepcheck.DrawFixed, Checks: 240, Steps: 10000, Took: 40 * s}},
		Kills: []Kill{{Mutant: mutants.Mutant{Name: "m", Kills: "backoff"},
			Harness: Kills{Times: []time.Duration{s, 3 * s}, Checks: []int{1, 3}},
			Fixed:   Kills{Times: []time.Duration{5 * s}, Checks: []int{9}}}},
	}
	var b strings.Builder
	if err := r.Markdown(&b, Machine{}, "bench"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| the same work bare, ops/s | 2400 | 0.80 of the four verbs' rate |",
		"| fault-free steps/s | 1500 | **1.60 bare ops of the same work a step** (a step makes 0.80 of the subject's database calls, a clock move or a publish none; the run 2.00× its replay); 2.00 bare ops a step of the four verbs",
		"| fault-injected steps/s | 750 | 0.50 of fault-free; 4.00 bare ops a step |",
		"| 3000 | 1 | 600 (600) | 600 | 1.50× |",
		"| swarm | 30.00 s | 12000 | 400 | none |",
		"| fixed | 40.00 s | 10000 | 250 | none |",
		"| m | backoff | 2/2 | 2.00 s | 3.00 s | 2 | 1/2 | 5.00 s | 5.00 s | 9 |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
}
