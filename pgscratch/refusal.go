package pgscratch

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Refusal is the server's refusal of what the harness asked on grounds no
// retry cures: the URL's user or password is wrong (SQLSTATE 28P01, 28000),
// its database does not exist (3D000), or its role lacks a privilege the
// harness needs, CONNECT or CREATEDB (42501). It is the caller's
// configuration, not infrastructure: the server answered, and will answer
// the same way again. A server that is down or unreachable is never a
// Refusal.
//
// Start (on a URL) and NewDatabase return it, wrapped; find it with
// errors.As.
type Refusal struct {
	Server *pgconn.PgError // the server's own error
	Doing  string          // what was refused, e.g. "connecting to postgres@127.0.0.1:5432/postgres"
}

// fixes says, per SQLSTATE a Refusal carries, what the user must change.
var fixes = map[string]string{
	"28P01": "check the URL's user and password",
	"28000": "check the URL's user and password, and the server's pg_hba.conf",
	"3D000": "the URL must name a database that exists (the harness creates its own beside it)",
	"42501": "the URL's role needs CONNECT on the URL's database and CREATEDB (a run creates its own database)",
}

// Error puts the server's own message first: pgx's error for a connection
// also tells its TLS attempt (sslmode=prefer) before the plain one the
// server refused, which says nothing the user must act on.
func (r *Refusal) Error() string {
	s := r.Server.Message
	if r.Server.Detail != "" {
		s += ": " + strings.TrimSuffix(r.Server.Detail, ".")
	}
	return fmt.Sprintf("%s (SQLSTATE %s), %s: %s", s, r.Server.Code, r.Doing, fixes[r.Server.Code])
}

func (r *Refusal) Unwrap() error { return r.Server }

// refused is err as a *Refusal of doing if the server's error inside it
// (pgx joins a connection's attempts; errors.As looks through them all)
// is one no retry cures; otherwise it is err itself. It classifies by
// SQLSTATE alone, never by the text.
func refused(err error, doing string) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) && fixes[pg.Code] != "" {
		return &Refusal{Server: pg, Doing: doing}
	}
	return err
}
