package stepcheck

import (
	"context"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
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
	OnCheck func(*harness.History)
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
	o.Semantics = withSeedNumbers(o.Semantics)
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

// withSeedNumbers fills in the numbers sem leaves out (zero) with the
// seed's (3 attempts: the harness's default), keeping every rule it
// declares: a subject that shares the seed's lease says nothing of it.
func withSeedNumbers(sem model.Semantics) model.Semantics {
	seed := model.SeedSemantics()
	if sem.Lease == 0 {
		sem.Lease = seed.Lease
	}
	if sem.MaxAttempts == 0 {
		sem.MaxAttempts = 3
	}
	if sem.Backoff == nil && sem.BackoffBase == 0 {
		sem.BackoffBase, sem.BackoffCap = seed.BackoffBase, seed.BackoffCap
	}
	return sem
}
