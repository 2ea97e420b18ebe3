package loopcheck

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// Result is what a run found. It is returned in every case: a pass, a
// violation, a flaky failure, an infrastructure error.
type Result struct {
	// Summary holds the checks (schedules) and steps run, the fault
	// coverage, what did not apply, and the failure, shrunk as far as
	// rapid got; Failure is nil when every schedule passed.
	harness.Summary
	// Schedule is the failing schedule, as shrunk as Failure.
	Schedule Schedule
	// Flaky says the shrunk schedule, run again up to three times, did not
	// fail: Failure and its story are from the last run that did.
	Flaky bool
	// Elapsed is the run's wall time, shrinking included.
	Elapsed time.Duration
	// Loop is what the nemesis did besides the network.
	Loop Loop
	// Options are the options the run used, defaults filled in.
	Options Options
}

// Run checks the subject with schedules drawn by rapid.
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
	r, err := open(newSubject, opts)
	if err != nil {
		res.Failure = &harness.Failure{Infrastructure: true, Message: err.Error()}
		tb.Errorf("infrastructure error: %v", err)
		return res
	}
	defer r.close()
	start := time.Now()
	var shrinkUntil time.Time
	rapid.Check(tb, func(t *rapid.T) {
		s := draw(t, r.links, opts.Dispatchers, opts.Steps)
		f, err := res.Failure, error(nil)
		switch {
		case f != nil && slices.Equal(s, res.Schedule):
			// rapid asks for the failing schedule again (to reproduce it
			// before shrinking, to confirm the shrunk one, or as a
			// candidate that changed nothing): real time would answer by
			// chance, so the recorded failure answers. Run confirms the
			// shrunk schedule itself afterwards (Flaky).
		case f != nil && time.Now().After(shrinkUntil):
			return // out of shrink time: see shrinkTime
		case opts.interrupted():
			res.Interrupted = true
			return // rapid keeps what it has; nothing new runs
		default:
			generated := res.Failure == nil
			res.count(s)
			f, err = r.run(s)
			if opts.OnCheck != nil && err == nil {
				h := r.story
				h.Shrinking = res.Failure != nil
				opts.OnCheck(&h)
			}
			if generated && !errors.Is(err, errInterrupted) {
				r.tally.fold(r.judged) // as Checks and Steps count: shrinking excluded
				r.checkpoint(&res.Summary, len(s), time.Since(start))
			}
		}
		switch {
		case errors.Is(err, errInterrupted):
			res.Interrupted = true
			if res.Failure == nil {
				res.Checks-- // abandoned: neither run nor passed
				res.Steps -= len(s)
			}
		case err != nil:
			if res.Failure == nil {
				res.Failure, res.Schedule = &harness.Failure{Infrastructure: true, Message: err.Error()}, s
			}
			t.Fatalf("infrastructure error: %v", err)
		case f != nil:
			t.Logf("property violated: %s: %s\ncounterexample: %d steps\n%s", f.Property, f.Message, stepsRun(f.History), f.History.Story())
			if res.Failure != nil && res.Failure.Property != f.Property {
				t.Fatalf("property violated: %s (shrinking a failure of %q: not the same failure)", f.Property, res.Failure.Property)
			}
			if res.Failure == nil {
				res.First = &harness.FirstFailure{Check: res.Checks, Elapsed: time.Since(start)}
				shrinkUntil = time.Now().Add(shrinkTime())
			}
			res.Failure, res.Schedule, res.Outcomes = f, s, r.outcomes
			t.Fatalf("property violated: %s", f.Property)
		}
	})
	if res.ShrinkRuns > 0 {
		res.ShrinkEnd = time.Since(start)
	}
	if f := res.Failure; f != nil && !f.Infrastructure && !res.Interrupted {
		again, err := r.runTries(res.Schedule, confirmTries)
		res.Flaky = err == nil && (again == nil || again.Property != f.Property)
	}
	res.Elapsed = time.Since(start)
	r.summarize(&res.Summary)
	res.Loop = r.loop()
	return res
}

// shrinkTime is rapid's shrink budget (-rapid.shrinktime). rapid checks
// it only between its shrink passes, and one pass may try a value dozens
// of times: on real time each try is a whole run, so a pass could take
// minutes past the budget. Past it, Run passes every new candidate at
// once (rapid keeps what it has) and runs only the schedule that failed.
func shrinkTime() time.Duration {
	if f := flag.Lookup("rapid.shrinktime"); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			if d, ok := g.Get().(time.Duration); ok {
				return d
			}
		}
	}
	return 30 * time.Second
}

// confirmTries is how many runs the shrunk schedule gets to fail again
// before Run calls the failure flaky.
const confirmTries = 3

// runTries runs s up to n times, until one fails.
func (r *runner) runTries(s Schedule, n int) (f *harness.Failure, err error) {
	for range n {
		if f, err = r.run(s); f != nil || err != nil {
			break
		}
	}
	return f, err
}

// count counts s as a generated schedule, or a shrink run once a
// failure is found.
func (res *Result) count(s Schedule) {
	if res.Failure == nil {
		res.Checks++
		res.Steps += len(s)
	} else {
		res.ShrinkRuns++
	}
}

// Replay runs schedule s n times and counts the runs that fail with the
// same property: real time does not replay exactly. last is the last
// failing run's failure (nil if none failed), with its story.
func Replay(newSubject NewSubject, opts Options, s Schedule, property string, n int) (reproduced int, last *harness.Failure, err error) {
	cleanup, err := provision(&opts)
	if err != nil {
		return 0, nil, err
	}
	defer cleanup()
	r, err := open(newSubject, opts.withDefaults())
	if err != nil {
		return 0, nil, err
	}
	defer r.close()
	for range n {
		f, err := r.run(s)
		if err != nil {
			return reproduced, last, err
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
	tally tally
	story harness.History // the last schedule's, pass or fail
	// outcomes is the last schedule's end state, when a liveness judge
	// failed it: every committed payment's outcome.
	outcomes []harness.PaymentOutcome
	judged   judged // the last schedule's judgements
}

func open(newSubject NewSubject, opts Options) (*runner, error) {
	base, err := url.Parse(opts.DatabaseURL)
	if err != nil || (base.Scheme != "postgres" && base.Scheme != "postgresql") {
		return nil, errors.New("loopcheck: DatabaseURL must be a postgres:// URL")
	}
	r := &runner{opts: opts, base: base, net: faults.NewNet(base.Host)}
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
	if r.admin, err = pgx.Connect(ctx, opts.DatabaseURL); err != nil {
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
