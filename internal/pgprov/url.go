package pgprov

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// startURL uses a server the caller runs. It only checks that the server
// answers; databases are created per run by NewDatabase.
func startURL(ctx context.Context, url string) (*Cluster, error) {
	if _, err := pgx.ParseConfig(url); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadURL, err)
	}
	conn, err := connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("postgres at %s: %w", redact(url), err)
	}
	closeConn(conn)
	return &Cluster{Source: SourceURL, adminURL: url}, nil
}

// redact hides the password of a connection string for messages.
func redact(s string) string {
	cfg, err := pgx.ParseConfig(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return fmt.Sprintf("%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
}
