package stepcheck

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

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
		ConnString: func(a harness.Actor) string {
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
