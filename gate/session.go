package gate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// session is what a command runs on: a PostgreSQL cluster (docs/prerequisites.md),
// and the interrupts that stop the run on it cleanly.
type session struct {
	ctx     context.Context
	cluster *pgscratch.Server
	intr    *interrupts
}

// openSession finds or starts PostgreSQL. A malformed URL, or one the
// server refuses on grounds no retry cures (a wrong password, a database
// that does not exist: see infraError), is the user's error, exit 2; an
// interrupt is the user's stop; anything else is the infrastructure's,
// exit 3.
// A graceful session stops its run at the first interrupt (see
// interrupts); any other ends at once, cleaning up.
func openSession(url string, stderr io.Writer, graceful bool, settings []string) (*session, error) {
	intr := watchInterrupts(stderr, graceful)
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	go func() {
		select {
		case <-intr.C:
			cancel() // Ctrl-C while the server starts: stop starting it
		case <-sctx.Done():
		}
	}()
	c, err := pgscratch.Start(sctx, pgscratch.Options{DatabaseURL: url, OwnSignals: true, Settings: settings})
	switch {
	case err != nil && intr.signal() != nil:
		intr.stop()
		return nil, intr.err()
	case errors.Is(err, pgscratch.ErrBadURL), errors.Is(err, pgscratch.ErrSettings):
		intr.stop()
		return nil, &Error{Code: ExitUsage, Err: err}
	case err != nil:
		intr.stop()
		return nil, infraError(err)
	}
	intr.onForce(func() { c.Close() })
	return &session{ctx: context.Background(), cluster: c, intr: intr}, nil
}

// sweep drops the tool's databases on a URL server whose run is provably
// gone (killed with SIGKILL before it could drop its own), and says so;
// it says, one line each, what it left and why: a database is dropped
// only if its marker verifies (pgscratch.Leftover), never on its comment's
// word.
func (s *session) sweep(stderr io.Writer) {
	if s.cluster.Source != pgscratch.SourceURL {
		return
	}
	if err := pgscratch.EnsureOwnerKey(); err != nil {
		fmt.Fprintf(stderr, "outboxcheck: warning: %s: no database is swept, and a later run cannot sweep this one's\n", OneLine(err.Error()))
	}
	ctx, cancel := context.WithTimeout(s.ctx, time.Minute)
	defer cancel()
	dropped, left, err := s.cluster.SweepLeftovers(ctx)
	for _, l := range dropped {
		fmt.Fprintf(stderr, "outboxcheck: dropped database %s, left by a run that is gone\n", l)
	}
	for _, l := range left {
		fmt.Fprintf(stderr, "outboxcheck: left database %s: %s\n", l.Name, leftWhy(l))
	}
	if err != nil {
		fmt.Fprintf(stderr, "outboxcheck: warning: sweeping leftover databases: %s\n", OneLine(err.Error()))
	}
}

// leftWhy says why a leftover database is left: not the tool's, or its
// run may still be running.
func leftWhy(l pgscratch.Leftover) string {
	if !l.Ours() {
		return l.Refused
	}
	return fmt.Sprintf("its run (pid %d on %s, started %s) may still be running", l.PID, l.Host, l.Started.Format(time.RFC3339))
}

func (s *session) close() {
	s.cluster.Close()
	s.intr.stop()
}

// interrupted is the exit error of a run an interrupt stopped, or nil.
func (s *session) interrupted() error {
	if s.intr.signal() == nil {
		return nil
	}
	return s.intr.err()
}

// options creates a database for one run and the options to run there;
// drop removes the database.
func (s *session) options(faults, concurrent bool) (opts stepcheck.Options, drop func(), err error) {
	db, err := s.cluster.NewDatabase(s.ctx)
	if err != nil {
		return opts, nil, infraError(err)
	}
	opts = stepcheck.Options{DatabaseURL: db.URL, Faults: faults, Concurrent: concurrent}
	if faults && s.cluster.Owned() {
		opts.CrashDatabase = s.cluster.Crash
	}
	return opts, func() { db.Drop(context.Background()) }, nil
}
