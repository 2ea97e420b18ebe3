package stepcheck_test

import (
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/internal/leakcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// faultOptions turns every fault on, with database crashes when the test
// binary owns its cluster.
func faultOptions(t *testing.T) stepcheck.Options {
	db := pgscratch.NewDatabase(t)
	opts := stepcheck.Options{DatabaseURL: db.URL, Faults: true}
	if c := pgscratch.Shared(t); c.Owned() {
		opts.CrashDatabase = c.Crash
	}
	return opts
}

// TestReferenceUnderFaults: the reference implementation under partitions,
// lost replies, crashes mid-request and database crashes, with zero
// violations — and every fault kind must actually strike, so the run is
// not green because nothing happened. No goroutine, proxy or session may
// outlive the run.
func TestReferenceUnderFaults(t *testing.T) {
	opts := faultOptions(t)
	// The cluster's own goroutines predate the run; a crash restarts its
	// postmaster under a new one.
	defer leakcheck.Start(t, goleak.IgnoreAnyFunction("github.com/outboxcheck/outboxcheck/internal/pinned.Start.func1"))()
	said := 0 // results that say which fault ended their call early
	opts.OnCheck = func(h *harness.History) {
		for _, e := range h.Entries {
			if strings.Contains(e.Result, "(ended early: a partition on "+e.Actor+"'s link held its request)") {
				said++
			}
		}
	}
	sum := stepcheck.Exercise(t, reference.New, opts)
	for _, k := range faults.All {
		if c := sum.Network[k]; c.Struck == 0 || c.Affected == 0 {
			t.Errorf("fault %s never struck in %d checks: %+v", k, sum.Checks, c)
		}
	}
	if sum.Broker.Refused == 0 || sum.Broker.AckLost == 0 {
		t.Errorf("broker faults never happened: %+v", sum.Broker)
	}
	if sum.Crashes.DispatcherMidMark == 0 || sum.Crashes.ConsumerReached == 0 {
		t.Errorf("crash points never reached: %+v", sum.Crashes)
	}
	if opts.CrashDatabase != nil && sum.Crashes.Database == 0 {
		t.Errorf("the database never crashed: %+v", sum.Crashes)
	}
	// A call whose request a blackhole held cannot be answered before its
	// deadline: the harness ends it then, rather than waiting it out.
	if sum.Network[faults.Blackhole].Affected > 0 && sum.Time.EndedEarly == 0 {
		t.Errorf("blackholes held requests, yet no call was ended early: %d calls ran into their deadline", sum.Time.Deadlines)
	}
	if sum.Time.EndedEarly > 0 && said == 0 {
		t.Errorf("%d calls were ended early, and no result says which fault ended it", sum.Time.EndedEarly)
	}
}
