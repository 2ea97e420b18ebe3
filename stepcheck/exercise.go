package stepcheck

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/pgscratch"

	"github.com/outboxcheck/outboxcheck/model"
)

// Options tune a run. The zero value is filled by defaults.
type Options struct {
	// DatabaseURL is the run's database, which must be one the tool
	// created (pgscratch marks them): every check deletes rows.
	// Empty: the run finds PostgreSQL itself (OUTBOXCHECK_DATABASE_URL,
	// else Docker, else the local server binaries), creates a database,
	// and removes both when it ends.
	DatabaseURL string
	// Semantics is what the subject implements, as it declares it (see
	// model.Semantics): every result is judged by it. Default (a zero
	// Lease): the seed's lease (1 min), backoff (2^min(attempts,10) s) and
	// rules, but DEAD at 3 attempts, so that checks of ~30 steps reach
	// DEAD.
	Semantics model.Semantics
	// Dispatchers and Consumers: default 2 each.
	Dispatchers, Consumers int
	// MaxBatch is the largest claim limit drawn. Default 3.
	MaxBatch int
	// CallTimeout bounds every subject call. Default 10 s.
	CallTimeout time.Duration
	// Start is the harness clock's first instant. Default 2026-01-01 UTC.
	Start time.Time
	// OnCheck, if set, receives each check's history when it ends.
	OnCheck func(*History)
	// Faults turns on the fault actions: network partitions per actor link
	// (through an embedded toxiproxy), broker faults, crashes mid-request,
	// and CrashDatabase when it is set.
	Faults bool
	// CrashDatabase, if set, SIGKILLs the server and brings it back (see
	// pgscratch.Server.Crash). Nil: database crashes are not applicable.
	CrashDatabase func(context.Context) error
	// Concurrent adds ClaimTogether (two dispatchers claim at the same
	// instant) and DeliverTogether (two consumers handle one message at
	// the same instant); the model accepts either order. The database
	// picks the order, so a seed replays the same actions but, at those
	// steps, maybe the other order and what follows from it.
	Concurrent bool
	// Deadline, if set, is a time budget: no check starts after it (the
	// checks rapid still asks for pass at once, uncounted). A failure found
	// before it is shrunk as usual.
	Deadline time.Time
	// Interrupt, when closed, stops the run at the next step: no check
	// starts after it, the check in progress ends without its drain (it is
	// neither judged further nor counted as passed), and shrinking stops,
	// keeping the smallest counterexample found so far. The run returns
	// with Summary.Interrupted set. The interrupt itself is never shrunk.
	Interrupt <-chan struct{}
	// DatabaseClock is for a subject whose SQL reads the database's time
	// (now(), clock_timestamp(), statement_timestamp(),
	// transaction_timestamp()) instead of the now it is given: the harness
	// installs its clock in the run's database and puts it first on the
	// database's search_path, so those functions, unqualified, read the
	// harness's time in every session that starts after it (the subject's
	// included). Not covered: CURRENT_TIMESTAMP, LOCALTIMESTAMP and
	// CURRENT_DATE (SQL keywords, not functions), pg_catalog.now() written
	// out, defaults and functions created before the run (they keep the
	// function they were created with), and sessions that set their own
	// search_path. See docs/adapters.md.
	DatabaseClock bool
	// MaxChecks, if set, is how many checks may start: rapid's further
	// ones pass at once, uncounted. A replay sets 1, so that a fail file
	// that passes is not followed by a random check of rapid's.
	MaxChecks int
	// Draw is how each check's actions are drawn: DrawSwarm (the zero
	// value) or DrawFixed. A fail file replays only under the Draw that
	// made it.
	Draw Draw
	// MaxShrinkRuns, if set, bounds shrinking by work instead of time:
	// after this many replays, rapid's further candidates pass at once
	// (shrinkguard.go). The same seed then shrinks to the same
	// counterexample on a fast machine and on a loaded one; rapid's shrink
	// time still applies too.
	MaxShrinkRuns int
}

// interrupted reports whether o.Interrupt is closed.
func (o Options) interrupted() bool {
	select {
	case <-o.Interrupt:
		return true
	default:
		return false
	}
}

func (o Options) withDefaults() Options {
	if o.Semantics.Lease == 0 {
		o.Semantics = model.SeedSemantics()
		o.Semantics.MaxAttempts = 3
	}
	if o.Dispatchers == 0 {
		o.Dispatchers = 2
	}
	if o.Consumers == 0 {
		o.Consumers = 2
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = 3
	}
	if o.CallTimeout == 0 {
		// Faults or not: a call that a fault of the harness's own holds
		// is ended at once (callctx.go), so the deadline waits out only
		// what is slow, and a loaded machine's slow call must not become
		// a different history (it did at 400 ms: CI, under two burners).
		o.CallTimeout = 10 * time.Second
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return o
}

// Exercise checks a subject with rapid: each check resets the subject,
// runs a random sequence of actions with the safety properties after each,
// drains, and checks liveness. It fails t with the shrunk counterexample,
// and logs the run's summary (checks, fault coverage, what did not apply).
func Exercise(t *testing.T, newSubject NewSubject, opts Options) Summary {
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
	sum     Summary
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
func Run(tb rapid.TB, newSubject NewSubject, opts Options) Summary {
	tb.Helper()
	opts = opts.withDefaults()
	r := &runner{ctx: context.Background(), opts: opts, sum: Summary{NotApplicable: map[string]string{}, Time: &Timing{}}, started: time.Now()}
	defer func() { r.sum.Time.Total = time.Since(r.started) }()
	if err := opts.Semantics.Validate(); err != nil {
		r.record(Failure{Infrastructure: true, Message: "configuration: " + err.Error()})
		tb.Fatalf("outboxcheck: configuration error: %v", err)
		return r.sum
	}
	if opts.DatabaseURL == "" {
		cleanup, err := r.provision()
		if err != nil {
			r.record(Failure{Infrastructure: true, Message: err.Error()})
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
		r.record(Failure{Infrastructure: true, Message: err.Error()})
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
		if err := m.doAs(Actor{Role: Operator}, SpentReset, r.subj.Reset); err != nil {
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
		r.record(Failure{Infrastructure: true, Message: err.Error()})
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
	r.sum.Progress = append(r.sum.Progress, Checkpoint{Check: r.sum.Checks, Elapsed: time.Since(r.started),
		Steps: steps, Faults: injected, Struck: struck})
}

// ids numbers the ids a subject makes, from 1 in every check.
var ids atomic.Uint64

func (r *runner) open(newSubject NewSubject) error {
	var err error
	if r.links, err = newLinks(r.opts.DatabaseURL, r.opts.Faults); err != nil {
		return err
	}
	// Every actor's link exists from the start, so that a subject may
	// connect (and call Env.ConnString) lazily, on its first call.
	for _, a := range faultable(r.opts) {
		if _, err = r.links.connString(a); err != nil {
			return err
		}
	}
	r.harness = &ownSession{url: r.opts.DatabaseURL}
	if err = withRetries(r.ctx, 0, r.harness.reconnect); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	// Every check deletes the subject's rows: never in a database the tool
	// did not create (a URL pointing at real data would lose it).
	if err = pgscratch.EnsureOwned(r.ctx, r.harness.conn); err != nil {
		return err
	}
	if r.opts.Faults && r.opts.CrashDatabase == nil {
		r.sum.NotApplicable["CrashDatabase"] = "the harness does not own the server"
	}
	r.declared()
	if r.opts.DatabaseClock {
		ctx, cancel := context.WithTimeout(r.ctx, time.Minute)
		defer cancel()
		if r.clock, err = installClock(ctx, r.opts.DatabaseURL, r.opts.Start); err != nil {
			return err
		}
	}
	env := Env{
		ConnString: func(a Actor) string {
			s, lerr := r.links.connString(a)
			if lerr != nil {
				err = lerr
			}
			return s
		},
		NewID:       func() string { return fmt.Sprintf("00000000-0000-4000-8000-%012x", ids.Add(1)) },
		Semantics:   r.opts.Semantics,
		Dispatchers: r.opts.Dispatchers,
		Consumers:   r.opts.Consumers,
		Broker:      &r.broker,
	}
	ctx, cancel := context.WithTimeout(r.ctx, time.Minute)
	defer cancel()
	subj, serr := newSubject(ctx, env)
	if err == nil && serr != nil {
		err = &buildError{serr}
	}
	if err != nil {
		if subj != nil {
			subj.Close()
		}
		return fmt.Errorf("build subject: %w", err)
	}
	if err := checkSemantics(r.opts.Semantics, subj); err != nil {
		subj.Close()
		return fmt.Errorf("configuration: %w", err)
	}
	r.subj = tallied{Subject: subj, r: r}
	return nil
}

// leftovers reports sessions a run must not leave behind: any of the
// subject's sessions idle in a transaction (holding locks) once the run is
// over. A session the run's last step crashed (its socket closed, which
// the server sees a moment later; without faults nothing settles it) is
// not left behind: only one still there after leftoverGrace is.
func (r *runner) leftovers() error {
	ctx, cancel := context.WithTimeout(r.ctx, 3*leftoverGrace)
	defer cancel()
	m := &machine{ctx: ctx, harness: r.harness}
	deadline := time.Now().Add(leftoverGrace)
	for {
		n, err := m.sessions(ctx, "state = 'idle in transaction' AND application_name LIKE 'outboxcheck-%'")
		switch {
		case err != nil:
			return fmt.Errorf("check leftovers: %w", err)
		case n == 0:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("%d sessions of the subject left idle in a transaction", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// leftoverGrace is how long a session may take to go once its client is:
// generous, since a loaded machine is slow (a session that is gone ends
// the wait at once).
const leftoverGrace = 10 * time.Second

func (r *runner) close() {
	if r.subj != nil {
		r.subj.Close()
	}
	r.clock.close()
	if r.links != nil {
		r.links.close()
	}
	if r.harness != nil {
		r.harness.close()
	}
}

// weights say how often rapid should pick each action relative to the
// others: the verbs where the outbox's bugs live come up more often.
var weights = map[string]int{
	"Commit": 3, "Claim": 3, "Publish": 3, "MarkPublished": 3, "MarkFailed": 2,
	"AdvanceClock": 3, "Deliver": 2, "CrashDispatcher": 1, "RestartDispatcher": 1,
	"CrashConsumer": 1, "Rollback": 1, "Redrive": 1, "Cleanup": 1, "Rescue": 2,
	"Partition": 2, "Heal": 2, "CrashDispatcherMidMark": 1, "CrashDatabase": 1, "ClaimTogether": 3, "DeliverTogether": 2,
}

// actions lists the state machine's actions; each is its own entry so
// shrinking can drop it. An action of weight w is listed w times (as
// "Name", "Name#2", …) because rapid picks keys uniformly. An action the
// check's swarm leaves out is listed all the same and skips, so that the
// step draws another: were it left off the list, every later action's
// draw would name another action once the shrinker turns it back on (its
// draw shrinks to "on"), and no step of the counterexample would keep its
// meaning. Skipped, only the draws that named it change.
func (m *machine) actions() map[string]func(*rapid.T) {
	out := map[string]func(*rapid.T){}
	for name, fn := range m.byName() {
		if !m.swarm.on(name) {
			fn = func(*rapid.T) { skip("the check's swarm leaves out " + name) }
		}
		out[name] = fn
		for i := 2; i <= weights[name]; i++ {
			out[fmt.Sprintf("%s#%d", name, i)] = fn
		}
	}
	return out
}

// byName is every action the run has, by name.
func (m *machine) byName() map[string]func(*rapid.T) {
	byName := map[string]func(*rapid.T){
		"Commit": m.Commit, "Rollback": m.Rollback, "Claim": m.Claim, "Publish": m.Publish,
		"MarkPublished": m.MarkPublished, "MarkFailed": m.MarkFailed, "AdvanceClock": m.AdvanceClock,
		"CrashDispatcher": m.CrashDispatcher, "RestartDispatcher": m.RestartDispatcher,
		"Deliver": m.Deliver, "CrashConsumer": m.CrashConsumer, "Redrive": m.Redrive, "Cleanup": m.Cleanup,
	}
	sem := m.opts.Semantics
	for _, op := range []model.Operation{model.OpRedrive, model.OpCleanup} {
		if !sem.Has(op) {
			delete(byName, string(op))
		}
	}
	if sem.Rescue != nil {
		byName["Rescue"] = m.Rescue
	}
	if m.opts.Faults {
		byName["Partition"], byName["Heal"] = m.Partition, m.Heal
		byName["CrashDispatcherMidMark"] = m.CrashDispatcherMidMark
		if m.opts.CrashDatabase != nil {
			byName["CrashDatabase"] = m.CrashDatabase
		}
	}
	if m.opts.Concurrent {
		byName["ClaimTogether"], byName["DeliverTogether"] = m.ClaimTogether, m.DeliverTogether
	}
	return byName
}

// provision finds or starts PostgreSQL and creates the run's database.
func (r *runner) provision() (cleanup func(), err error) {
	ctx, cancel := context.WithTimeout(r.ctx, 5*time.Minute)
	defer cancel()
	c, db, cleanup, err := pgscratch.Scratch(ctx)
	if err != nil {
		return nil, err
	}
	r.opts.DatabaseURL = db.URL
	if r.opts.Faults && r.opts.CrashDatabase == nil && c.Owned() {
		r.opts.CrashDatabase = c.Crash
	}
	return cleanup, nil
}
