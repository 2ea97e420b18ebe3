package pgscratch

// Start's order: a database URL from the caller or
// OUTBOXCHECK_DATABASE_URL; else a reachable Docker daemon through
// testcontainers-go; else local server binaries, started as a throwaway
// cluster in a temp dir; else one error that names all three.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
)

// Source says where a Server came from.
type Source string

const (
	SourceURL    Source = "url"
	SourceDocker Source = "docker"
	SourceLocal  Source = "local"
)

// EnvDatabaseURL names the environment variable that points the harness at
// an existing server. The harness creates its own database there and drops
// it afterwards; it never works in the database the URL names.
const EnvDatabaseURL = "OUTBOXCHECK_DATABASE_URL"

// EnvImage overrides the Docker image used through testcontainers-go.
const EnvImage = "OUTBOXCHECK_POSTGRES_IMAGE"

// DefaultImage is the Docker image used when EnvImage is unset.
const DefaultImage = "postgres:15-alpine"

// ErrNoPostgres is returned by Start when no way to reach PostgreSQL exists.
var ErrNoPostgres = errors.New("no PostgreSQL available: set " + EnvDatabaseURL +
	" (or --database-url) to a server URL, or start a Docker daemon (testcontainers-go runs " + DefaultImage +
	"), or install the PostgreSQL server binaries (Debian: apt-get install postgresql; initdb and postgres on PATH or under /usr/lib/postgresql/*/bin)")

// Options choose how Start finds a server. The zero value follows docs/prerequisites.md.
type Options struct {
	// DatabaseURL, when set, wins over everything else.
	DatabaseURL string
	// Image overrides the Docker image (else EnvImage, else DefaultImage).
	Image string
	// NoDocker skips the Docker probe.
	NoDocker bool
	// OwnSignals says the caller handles SIGINT and SIGTERM itself and
	// closes the cluster when it is done (a CLI that finishes its report
	// first). Otherwise the cluster is closed at the first such signal,
	// which is then raised again.
	OwnSignals bool
	// Settings are server settings the run needs, "name=value" (e.g.
	// wal_level=logical, for a relay that reads the write-ahead log): a
	// server the harness starts runs with them; one given by URL must
	// already (ErrSettings otherwise).
	Settings []string
}

// Server is a PostgreSQL server the run may create databases on.
// Close is idempotent and safe for concurrent use.
type Server struct {
	Source  Source
	Version string // server_version, e.g. "15.18"

	adminURL string
	local    *localServer // non-nil only when the harness owns the process

	closeOnce sync.Once
	closeErr  error
	closeFn   func() error

	mu  sync.Mutex
	dbs map[*Database]struct{} // created and not yet dropped
}

// Start finds or starts a server in the order docs/prerequisites.md gives.
func Start(ctx context.Context, opts Options) (*Server, error) {
	extra, err := settingArgs(opts.Settings)
	if err != nil {
		return nil, err
	}
	url := opts.DatabaseURL
	if url == "" {
		url = os.Getenv(EnvDatabaseURL)
	}
	var c *Server
	switch {
	case url != "":
		c, err = startURL(ctx, url)
	case !opts.NoDocker && dockerReachable():
		c, err = startDocker(ctx, imageFor(opts), extra)
	default:
		bin, ferr := findBinaries()
		if ferr != nil {
			return nil, ErrNoPostgres
		}
		c, err = startLocal(ctx, bin, extra)
	}
	if err != nil {
		return nil, err
	}
	if err := c.readVersion(ctx); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.checkSettings(ctx, opts.Settings); err != nil {
		c.Close()
		return nil, err
	}
	if !opts.OwnSignals {
		register(c)
	}
	return c, nil
}

func imageFor(opts Options) string {
	if opts.Image != "" {
		return opts.Image
	}
	if img := os.Getenv(EnvImage); img != "" {
		return img
	}
	return DefaultImage
}

// Owned reports whether the harness owns the server process (and so may
// crash and restart it).
func (c *Server) Owned() bool { return c.local != nil }

// URL is the server's admin connection string (its postgres database),
// for a tool that runs on this server through --database-url.
func (c *Server) URL() string { return c.adminURL }

// ErrNotOwnedServer is returned by Crash when the harness does not own the
// server process (a URL or a container).
var ErrNotOwnedServer = errors.New("the harness does not own this PostgreSQL server: database crashes are not applicable")

// Crash SIGKILLs the server and every backend, restarts it on the same port
// and data, and returns once crash recovery is complete.
func (c *Server) Crash(ctx context.Context) error {
	if c.local == nil {
		return ErrNotOwnedServer
	}
	return c.local.crash(ctx)
}

// Close stops what Start started and removes its files. A cluster reached by
// URL is left running, but the databases the run created on it and did not
// drop (a run cut short, Ctrl-C) are dropped.
func (c *Server) Close() error {
	c.closeOnce.Do(func() {
		unregister(c)
		if c.local == nil {
			c.closeErr = c.dropAll()
		}
		if c.closeFn != nil {
			c.closeErr = errors.Join(c.closeErr, c.closeFn())
		}
	})
	return c.closeErr
}

func (c *Server) dropAll() error {
	c.mu.Lock()
	var all []*Database
	for d := range c.dbs {
		all = append(all, d)
	}
	c.mu.Unlock()
	var errs []error
	for _, d := range all {
		errs = append(errs, d.Drop(context.Background()))
	}
	return errors.Join(errs...)
}

func (c *Server) readVersion(ctx context.Context) error {
	conn, err := connect(ctx, c.adminURL)
	if err != nil {
		return fmt.Errorf("postgres (%s): %w", c.Source, err)
	}
	defer closeConn(conn)
	var v string
	if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&v); err != nil {
		return fmt.Errorf("postgres (%s): read version: %w", c.Source, err)
	}
	c.Version = strings.Fields(v)[0]
	return nil
}
