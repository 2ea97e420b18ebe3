package loopcheck

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Payment ids sort and range by number: pay-42 before pay-100, runs of
// consecutive ones as pay-3..pay-17, and past the limit a count.
func TestPayRanges(t *testing.T) {
	ids := byNumber(map[string]bool{"pay-100": true, "pay-42": true, "pay-3": true, "pay-4": true, "pay-5": true, "pay-101": true, "x": true})
	if got := strings.Join(ids, " "); got != "pay-3 pay-4 pay-5 pay-42 pay-100 pay-101 x" {
		t.Fatalf("numeric order: %s", got)
	}
	if got := payRanges(ids, 8); got != "pay-3..pay-5, pay-42, pay-100..pay-101, x" {
		t.Fatalf("ranges: %s", got)
	}
	if got := payRanges(ids, 2); got != "pay-3..pay-5, pay-42, and 3 more" {
		t.Fatalf("ranges, at most 2: %s", got)
	}
}

// A no-loss failure of 83 payments summarises: how many of how many, the
// ranges in numeric order, the first three in full; every payment's
// outcome is kept for report.json, in numeric order.
func TestLostMessageSummarises(t *testing.T) {
	c := &check{runner: &runner{}, bro: newBroker(time.Now()), paid: map[string]bool{}}
	e := endState{dead: map[string]bool{}, pending: map[string]bool{"pay-1": true, "pay-2": true}, carried: map[string]bool{}}
	var lost []string
	for n := 1; n <= 116; n++ {
		if n <= 17 || n == 42 || n >= 50 {
			c.paid[fmt.Sprintf("pay-%d", n)] = true
			if n > 2 {
				lost = append(lost, fmt.Sprintf("pay-%d", n))
			}
		}
	}
	c.record("Drain", "operator", "", "")
	f := c.liveness(e, time.Second)
	if f == nil || f.Property != "no-loss" {
		t.Fatalf("no failure: %+v", f)
	}
	want := "83 of 85 committed payments lost (not delivered, not dead, not pending): pay-3..pay-17, pay-42, pay-50..pay-116; " +
		"83 never accepted by the broker, 0 carried by it but never taking effect; first: pay-3 (never published: the broker saw no publish of it), " +
		"pay-4 (never published: the broker saw no publish of it), pay-5 (never published: the broker saw no publish of it); 0 delivered, 0 dead, 2 pending, 83 lost; waited"
	if !strings.HasPrefix(f.Message, want) {
		t.Fatalf("message:\n%s\nwant it to start\n%s", f.Message, want)
	}
	got := c.runner.outcomes
	if len(got) != 85 || got[0].Payment != "pay-1" || got[0].Outcome != "pending" || got[2].Payment != "pay-3" || got[2].Outcome != "lost" ||
		got[2].Why == "" || got[len(got)-1].Payment != "pay-116" {
		t.Fatalf("outcomes: %d, first %+v, %+v, last %+v", len(got), got[0], got[2], got[len(got)-1])
	}
}
