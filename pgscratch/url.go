package pgscratch

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// startURL uses a server the caller runs. It only checks that the server
// answers and lets the URL in; databases are created per run by
// NewDatabase. A URL that does not parse, or a keyword=value connection
// string (the harness derives each run's database from a URL), is
// ErrBadURL; a server that refuses the URL's credentials or database is a
// *Refusal.
func startURL(ctx context.Context, url string) (*Server, error) {
	if _, err := pgx.ParseConfig(url); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadURL, err)
	}
	if !isURL(url) {
		return nil, fmt.Errorf("%w: a keyword=value connection string, not a URL: give postgres://user:password@host:port/database", ErrBadURL)
	}
	conn, err := connect(ctx, url)
	if err != nil {
		return nil, refused(fmt.Errorf("postgres at %s: %w", redact(url), err), "connecting to "+redact(url))
	}
	closeConn(conn)
	return &Server{Source: SourceURL, adminURL: url}, nil
}

// isURL says s is a URL, not a keyword=value connection string.
func isURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// redact hides the password of a connection string for messages.
func redact(s string) string {
	cfg, err := pgx.ParseConfig(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return fmt.Sprintf("%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
}
