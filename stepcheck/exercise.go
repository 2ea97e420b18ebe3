package stepcheck

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
	"pgregory.net/rapid"
)

// Exercise checks a subject with rapid: each check resets the subject,
// runs a random sequence of actions with the safety properties after each,
// drains, and checks liveness. It fails t with the shrunk counterexample,
// and logs the run's summary (checks, fault coverage, what did not apply).
func Exercise(t *testing.T, newSubject NewSubject, opts Options) harness.Summary {
	t.Helper()
	sum := Run(t, newSubject, opts)
	t.Logf("outboxcheck: %v", sum)
	return sum
}

// runner is one run: what every check of it shares.
type runner struct {
	ctx     context.Context
	opts    Options
	subj    Subject
	links   *links
	harness *ownSession
	sum     harness.Summary
	started time.Time
	broker  currentBroker // Env.Broker: the running check's broker
	clock   *dbClock      // the database's clock (Options.DatabaseClock), else nil
	calls   calls         // every call of the subject's, counted (tallied)
	cur     *machine      // the running check

	shrinkBy    time.Time // rapid's shrink deadline, once it shrinks a violation (shrinkguard.go)
	discarding  bool      // discard's panic is under way
	confirming  bool      // the running check is rapid's replay of a candidate that just failed (shrinkguard.go)
	confirmNext bool      // the running check is a candidate that failed: the next one confirms it
}

// Run is Exercise for any rapid.TB (a CLI supplies its own).
func Run(tb rapid.TB, newSubject NewSubject, opts Options) harness.Summary {
	tb.Helper()
	opts = opts.withDefaults()
	r := &runner{ctx: context.Background(), opts: opts, sum: harness.Summary{NotApplicable: map[string]string{}, Time: &harness.Timing{}}, started: time.Now()}
	defer func() { r.sum.Time.Total = time.Since(r.started) }()
	if err := opts.Semantics.Validate(); err != nil {
		r.record(harness.Failure{Infrastructure: true, Message: "configuration: " + err.Error()})
		tb.Fatalf("outboxcheck: configuration error: %v", err)
		return r.sum
	}
	if opts.DatabaseURL == "" {
		cleanup, err := r.provision()
		if err != nil {
			r.record(harness.Failure{Infrastructure: true, Message: err.Error()})
			tb.Fatalf("infrastructure error: %v", err)
			return r.sum
		}
		defer cleanup()
	}
	if err := r.open(newSubject); err != nil {
		f, unbuilt := r.unbuilt(err)
		r.close()
		if unbuilt {
			r.record(f)
			tb.Fatalf("subject error: %s", f.Message)
			return r.sum
		}
		r.record(harness.Failure{Infrastructure: true, Message: err.Error()})
		tb.Fatalf("infrastructure error: %v", err)
		return r.sum
	}
	defer r.close()
	rapid.Check(runTB{tb, r}, func(t *rapid.T) {
		defer r.catchDiscard()
		if f := r.sum.Failure; f != nil && f.Infrastructure {
			return // never shrunk (shrinkguard.go)
		}
		if r.sum.First == nil && !opts.Deadline.IsZero() && time.Now().After(opts.Deadline) {
			r.sum.OutOfTime = true
			return
		}
		if r.sum.First == nil && opts.MaxChecks > 0 && r.sum.Checks >= opts.MaxChecks {
			return
		}
		// An interrupt passes every check still asked for. Once a failure
		// is found, rapid's first re-run reproduces it before shrinking:
		// that one runs, so the fail file holds a whole failing run.
		if opts.interrupted() && (r.sum.First == nil || r.sum.ShrinkRuns > 0) {
			r.sum.Interrupted = true
			return
		}
		// The subject's failure is its first error: once reproduced, there
		// is nothing to shrink.
		if f := r.sum.Failure; f != nil && f.SubjectError && r.sum.ShrinkRuns > 0 {
			return
		}
		if r.sum.First == nil {
			r.sum.Checks++
		} else {
			r.sum.ShrinkRuns++
			r.shrinkStarted()
		}
		r.confirming, r.confirmNext = r.confirmNext, false
		if r.shrinkOver() {
			r.shrinkTimeUp()
			return
		}
		m := newMachine(r)
		m.logf = t.Logf // actions run on rapid's inner T, whose log is dropped
		r.broker.b, r.cur = m.broker, m
		ids.Store(0)
		m.endLockHolders() // an earlier check's open transactions would hold Reset up
		if err := m.doAs(harness.Actor{Role: harness.Operator}, harness.SpentReset, r.subj.Reset); err != nil {
			m.failedCall(t, "reset", err)
		}
		m.freshStart(t)
		m.syncClock(t)
		if opts.Draw == DrawSwarm {
			m.swarm = drawSwarm(t, slices.Sorted(maps.Keys(m.byName())), opts.Faults)
		}
		defer func() {
			if r.sum.ShrinkRuns == 0 {
				r.sum.Steps += len(m.hist.Entries)
				r.checkpoint(len(m.hist.Entries))
			}
			if opts.OnCheck != nil {
				m.hist.Shrinking = r.sum.ShrinkRuns > 0
				opts.OnCheck(m.hist)
			}
		}()
		stop := func() bool { return r.sum.ShrinkRuns != 1 && opts.interrupted() || r.shrinkOver() }
		steps(t, m.actions(), m.Check, stop)
		if r.shrinkOver() {
			r.shrinkTimeUp()
			return // a candidate given up: it passes
		}
		if stop() {
			r.sum.Interrupted = true
			return // cut short: its drain would judge a check that did not end
		}
		m.drain(t)
	})
	if r.sum.ShrinkRuns > 0 {
		r.sum.ShrinkEnd = time.Since(r.started)
	}
	r.logStopped(tb)
	if r.links.net != nil {
		r.sum.Network = r.links.net.Coverage()
	}
	r.sum.Calls = r.calls.counts()
	// A check cut short by an interrupt may hold a transaction on purpose
	// (a dispatcher stopped mid-claim): leftovers only judge whole runs.
	if r.sum.Interrupted {
		return r.sum
	}
	if err := r.leftovers(); err != nil {
		r.record(harness.Failure{Infrastructure: true, Message: err.Error()})
		tb.Errorf("infrastructure error: %v", err)
	}
	r.judgeAtEnd(tb)
	return r.sum
}

// checkpoint records the end of the generated check just run, of steps
// steps, with the run's fault counts so far.
func (r *runner) checkpoint(steps int) {
	now := r.sum
	if r.links.net != nil {
		now.Network = r.links.net.Coverage()
	}
	injected, struck := now.Faults()
	r.sum.Progress = append(r.sum.Progress, harness.Checkpoint{Check: r.sum.Checks, Elapsed: time.Since(r.started),
		Steps: steps, Faults: injected, Struck: struck})
}
