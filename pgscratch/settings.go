package pgscratch

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// sessionSources are pg_settings sources that describe one session, not
// the server: the client's startup parameters (application_name,
// client_encoding, DateStyle as pgx sends them), SET, and values the
// server forces per session or derives at startup (data_directory,
// wal_buffers when auto-tuned).
var sessionSources = []string{"default", "client", "session", "override", "interactive", "test"}

// databaseSources are the settings of ALTER DATABASE … SET (with or
// without a role): they apply in one database only.
var databaseSources = []string{"database", "database user"}

// ServerSettings returns the settings conn's sessions start with that
// differ from PostgreSQL's compiled-in defaults: name → value as SHOW
// prints it. A setting is listed when its pg_settings.source is the
// command line, a configuration file (ALTER SYSTEM included), an
// environment variable, or ALTER ROLE/DATABASE … SET, and its value is
// not boot_val. Per-session sources (sessionSources) are left out. The
// value of a setting whose name ends in "_command" or "conninfo" may hold
// a secret and is given as "(set, not recorded)". Settings conn's role
// may not read are not listed. ctx bounds the call (connectTimeout if it
// has no deadline).
func ServerSettings(ctx context.Context, conn *pgx.Conn) (map[string]string, error) {
	return readSettings(ctx, conn, sessionSources)
}

// Settings returns the ServerSettings that apply in every database the
// cluster hands out: it reads them on the maintenance database and leaves
// out that database's own (databaseSources), which NewDatabase's
// databases, made from template0, do not have.
func (c *Server) Settings(ctx context.Context) (map[string]string, error) {
	conn, err := connect(ctx, c.adminURL)
	if err != nil {
		return nil, fmt.Errorf("server settings: %w", err)
	}
	defer closeConn(conn)
	return readSettings(ctx, conn, append(append([]string{}, sessionSources...), databaseSources...))
}

func readSettings(ctx context.Context, conn *pgx.Conn, exclude []string) (map[string]string, error) {
	ctx, cancel := withDefaultDeadline(ctx)
	defer cancel()
	rows, err := conn.Query(ctx, `SELECT name, current_setting(name) FROM pg_settings
		WHERE source <> ALL($1) AND setting IS DISTINCT FROM boot_val ORDER BY name`, exclude)
	if err != nil {
		return nil, fmt.Errorf("server settings: %w", err)
	}
	out := map[string]string{}
	var name, value string
	_, err = pgx.ForEachRow(rows, []any{&name, &value}, func() error {
		out[name] = recordable(name, value)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("server settings: %w", err)
	}
	return out, nil
}

// recordable hides the values that may carry a password or a key.
func recordable(name, value string) string {
	if value != "" && (strings.HasSuffix(name, "_command") || strings.HasSuffix(name, "conninfo")) {
		return "(set, not recorded)"
	}
	return value
}
