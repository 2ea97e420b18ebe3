package loopcheck

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/brokers/jetstream"
	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// Result is what a run found. It is returned in every case: a pass, a
// violation, a flaky failure, an infrastructure error.
type Result struct {
	// Summary holds the checks (schedules) and steps run, the fault
	// coverage, what did not apply, and the failure, shrunk as far as
	// the shrink time allowed; Failure is nil when every schedule passed.
	harness.Summary
	// Schedule is the failing schedule, as shrunk as Failure.
	Schedule Schedule
	// Reproduced is how many of Confirmations runs of the shrunk schedule
	// failed again with the same property: real time does not replay
	// exactly. Both 0 when nothing failed, or the run was interrupted.
	Reproduced, Confirmations int
	// Flaky says the shrunk schedule did not fail again in any of its
	// confirmation runs: Failure and its story are from the last run
	// that did.
	Flaky bool
	// Elapsed is the run's wall time, shrinking included.
	Elapsed time.Duration
	// Loop is what the nemesis did besides the network.
	Loop Loop
	// Options are the options the run used, defaults filled in.
	Options Options
	// Parallel is how many schedules ran at once; ParallelNote says why
	// fewer than Options.Parallel, if so.
	Parallel     int
	ParallelNote string
}

// Run checks the subject with schedules drawn by rapid, until one fails;
// then it shrinks that schedule with its own shrinker (shrinker: rapid's
// would replay candidates as if real time replayed exactly) and confirms
// the shrunk one Options.Confirm times. A failure fails tb with its story.
func Run(tb rapid.TB, newSubject NewSubject, opts Options) Result {
	tb.Helper()
	opts = opts.withDefaults()
	res := Result{Options: opts}
	cleanup, err := provision(&opts)
	if err != nil {
		res.Failure = &harness.Failure{Infrastructure: true, Message: err.Error()}
		tb.Errorf("infrastructure error: %v", err)
		return res
	}
	defer cleanup()
	p, err := openPool(newSubject, opts)
	if err != nil {
		res.Failure = infraOrSubject(err)
		tb.Errorf("%s", res.Story())
		return res
	}
	defer p.close()
	r := p.runners[0]
	res.Parallel, res.ParallelNote = len(p.runners), p.note
	start := time.Now()
	g := newGeneration(p, opts, start)
	aims := r.aims()
	rapid.Check(tb, func(t *rapid.T) {
		// The rest of rapid's checks pass at once, drawing nothing, once
		// a failure is found, the time is up or the run is interrupted:
		// drawing a schedule costs, and an unbounded budget (--time)
		// leaves rapid a million checks to go.
		switch {
		case g.done():
			return
		case !opts.Deadline.IsZero() && time.Now().After(opts.Deadline):
			res.OutOfTime = true
			return
		case opts.interrupted():
			res.Interrupted = true
			return
		}
		s := draw(t, r.links, opts.Dispatchers, opts.Steps, aims, r.moreKinds())
		if !g.submit(s) && opts.interrupted() {
			res.Interrupted = true
		}
	})
	failedAt := g.wait(&res)
	res.Interrupted = res.Interrupted || opts.interrupted()
	if f := res.Failure; f != nil && !f.Infrastructure && !f.SubjectError && !res.Interrupted {
		p.shrinkAndConfirm(&res, failedAt, start)
	}
	res.Elapsed = time.Since(start)
	r.summarize(&res.Summary)
	res.Loop = r.loop()
	if res.Failure != nil {
		tb.Errorf("%s", res.Story())
	}
	return res
}

// Replay runs schedule s n times and counts the runs that fail with the
// same property: real time does not replay exactly. last is the last
// failing run's failure (nil if none failed), with its story;
// Options.OnCheck sees every run's story, pass or fail.
func Replay(newSubject NewSubject, opts Options, s Schedule, property string, n int) (reproduced int, last *harness.Failure, err error) {
	cleanup, err := provision(&opts)
	if err != nil {
		return 0, nil, err
	}
	defer cleanup()
	r, err := open(newSubject, opts.withDefaults(), &tally{})
	if err != nil {
		return 0, nil, err
	}
	defer r.close()
	for range n {
		f, err := r.run(s)
		if err != nil {
			return reproduced, last, err
		}
		if opts.OnCheck != nil {
			h := r.story
			opts.OnCheck(&h)
		}
		if f != nil && (property == "" || f.Property == property) {
			reproduced++
			last = f
		}
	}
	return reproduced, last, nil
}

// runner is one run: the subject, its links, the harness's own session.
type runner struct {
	opts  Options
	base  *url.URL
	net   *faults.Net
	subj  Subject
	links []string
	env   Env
	admin *pgx.Conn // direct: ends a killed actor's sessions
	tally *tally    // shared by a pool's runners
	// peers are the pool's other runners, on the first one: their links'
	// coverage is the run's too.
	peers []*runner
	// abort, when closed, abandons the schedule in progress (a shrink
	// candidate another runner beat, or a generated schedule after the
	// first failure).
	abort chan struct{}
	story harness.History // the last schedule's, pass or fail
	// until, when set, abandons a schedule in progress once it passes
	// (the shrink deadline).
	until time.Time
	// failedAt is the step of the last schedule whose check found its
	// failure, from 1; 0 when it passed or failed in the judge's end.
	failedAt int
	// outcomes is the last schedule's end state, when a liveness judge
	// failed it: every committed payment's outcome.
	outcomes []harness.PaymentOutcome
	judged   judged // the last schedule's judgements
	// js is the real broker (Options.JetStream), nil for the harness's
	// in-memory one.
	js *jetstream.Broker
}

func open(newSubject NewSubject, opts Options, t *tally) (*runner, error) {
	base, err := url.Parse(opts.DatabaseURL)
	if err != nil || (base.Scheme != "postgres" && base.Scheme != "postgresql") {
		return nil, errors.New("loopcheck: DatabaseURL must be a postgres:// URL")
	}
	r := &runner{opts: opts, base: base, net: faults.NewNet(base.Host), tally: t}
	r.links = []string{harness.Actor{Role: harness.Producer}.String(), harness.Actor{Role: harness.Consumer}.String()}
	for i := range opts.Dispatchers {
		r.links = append(r.links, dispatcher(i).String())
	}
	for _, l := range r.links {
		if _, err := r.net.Link(l); err != nil {
			r.net.Close()
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if opts.JetStream {
		if r.js, err = jetstream.Start(ctx, jetstream.Options{DedupeWindow: opts.DedupeWindow, CallTimeout: opts.CallTimeout}); err != nil {
			r.net.Close()
			return nil, err
		}
	}
	if r.admin, err = pgx.Connect(ctx, opts.DatabaseURL); err != nil {
		if r.js != nil {
			r.js.Close()
		}
		r.net.Close()
		return nil, fmt.Errorf("harness session: %w", err)
	}
	// Every schedule resets the subject, deleting its rows: only a
	// database the harness made will do (pgscratch, or none at all).
	if err := pgscratch.EnsureOwned(ctx, r.admin); err != nil {
		r.closeHarness()
		return nil, fmt.Errorf("loopcheck: %w (give no DatabaseURL, or one from pgscratch)", err)
	}
	var (
		mu      sync.Mutex
		linkErr error
	)
	r.env = Env{
		ConnString: func(a harness.Actor) string { // called from the subject's goroutines
			s, err := r.connString(a)
			mu.Lock()
			linkErr = errors.Join(linkErr, err)
			mu.Unlock()
			return s
		},
		Lease: opts.Lease, BackoffBase: opts.BackoffBase, MaxAttempts: opts.MaxAttempts, Dispatchers: opts.Dispatchers,
		RetryBudget: opts.RetryBudget,
	}
	if opts.JetStream {
		r.env.DedupeWindow, r.env.WireHold = opts.DedupeWindow, WireHold
	}
	subj, err := newSubject(ctx, r.env)
	mu.Lock()
	err = errors.Join(err, linkErr)
	mu.Unlock()
	if err != nil {
		if subj != nil {
			subj.Close()
		}
		r.closeHarness()
		return nil, fmt.Errorf("build subject: %w", err)
	}
	r.subj = subj
	return r, nil
}

// abandoned says whether the schedule in progress must stop: the run
// was interrupted, or the runner's deadline passed.
func (r *runner) abandoned() bool {
	select {
	case <-r.abort:
		return true
	default:
	}
	return r.opts.interrupted() || !r.until.IsZero() && time.Now().After(r.until)
}

func dispatcher(i int) harness.Actor { return harness.Actor{Role: harness.Dispatcher, N: i} }

// appName is actor a's application_name, by which the harness finds and
// ends its sessions.
func appName(a harness.Actor) string { return "outboxcheck-loop-" + a.String() }

func (r *runner) connString(a harness.Actor) (string, error) {
	u := *r.base
	if a.Role != harness.Operator {
		addr, err := r.net.Link(a.String())
		if err != nil {
			return "", err
		}
		u.Host = addr
	}
	q := u.Query()
	q.Set("application_name", appName(a))
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func (r *runner) close() {
	r.subj.Close()
	r.closeHarness()
}

func (r *runner) closeHarness() {
	if r.js != nil {
		r.js.Close()
	}
	r.net.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.admin.Close(ctx)
}

// provision gives opts a scratch database of the harness's own when it
// names none: found or started as pgscratch does, dropped by cleanup.
func provision(opts *Options) (cleanup func(), err error) {
	if opts.DatabaseURL != "" {
		return func() {}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, db, cleanup, err := pgscratch.Scratch(ctx)
	if err != nil {
		return nil, fmt.Errorf("provision PostgreSQL: %w", err)
	}
	opts.DatabaseURL = db.URL
	return cleanup, nil
}
