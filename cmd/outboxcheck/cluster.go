package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/outboxcheck/outboxcheck/internal/pgprov"
	"github.com/outboxcheck/outboxcheck/properties"
)

// session is what a command runs on: a context that Ctrl-C and SIGTERM
// cancel, and a PostgreSQL cluster (DESIGN §9).
type session struct {
	ctx     context.Context
	cluster *pgprov.Cluster
	stop    context.CancelFunc
}

// openSession finds or starts PostgreSQL. A malformed URL is the user's
// error; anything else is the infrastructure's.
func openSession(url string) (*session, error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	sctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	c, err := pgprov.Start(sctx, pgprov.Options{DatabaseURL: url})
	switch {
	case errors.Is(err, pgprov.ErrBadURL):
		stop()
		return nil, &codedError{code: exitUsage, err: err}
	case err != nil:
		stop()
		return nil, infraError(err)
	}
	return &session{ctx: ctx, cluster: c, stop: stop}, nil
}

func (s *session) close() {
	s.cluster.Close()
	s.stop()
}

// options creates a database for one run and the options to run there;
// drop removes the database.
func (s *session) options(faults, concurrent bool) (opts properties.Options, drop func(), err error) {
	db, err := s.cluster.NewDatabase(s.ctx)
	if err != nil {
		return opts, nil, infraError(err)
	}
	opts = properties.Options{DatabaseURL: db.URL, Faults: faults, Concurrent: concurrent}
	if faults && s.cluster.Owned() {
		opts.CrashDatabase = s.cluster.Crash
	}
	return opts, func() { db.Drop(context.Background()) }, nil
}
