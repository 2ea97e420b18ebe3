package sqlfile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/outboxcheck/outboxcheck/impl"
)

// ConfigError is a mistake in the team's own files, found before any
// check runs: a schema that does not apply, a query that does not prepare
// against it. It names the file, the line and the query.
type ConfigError struct {
	File  string
	Line  int
	Query string // "" for the schema
	Err   error
}

func (e *ConfigError) Error() string {
	what := "schema"
	if e.Query != "" {
		what = "query " + e.Query
	}
	return fmt.Sprintf("%s:%d: %s: %v", e.File, e.Line, what, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// Preflight applies the schema file (then the reference's schema, as a run
// does) in the empty database at url, and prepares every required query
// of the queries file against it, so that a team's typo is one clear error
// before the first check, not an infrastructure error after hundreds of
// shrink runs. Errors of the team's files are *ConfigError; any other
// error is the connection's.
func Preflight(ctx context.Context, url, queriesFile, schemaFile string) error {
	src, err := os.ReadFile(queriesFile)
	if err != nil {
		return err
	}
	qs, err := Parse(queriesFile, src)
	if err != nil {
		return err
	}
	queries, err := Queries(queriesFile, src)
	if err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("preflight: %w", err)
	}
	defer conn.Close(context.Background())
	if schemaFile != "" {
		b, err := os.ReadFile(schemaFile)
		if err != nil {
			return err
		}
		if _, err := conn.Exec(ctx, string(b)); err != nil {
			return &ConfigError{File: schemaFile, Line: lineOf(string(b), 0, err), Err: pgMessage(err)}
		}
	}
	if err := impl.Migrate(ctx, conn); err != nil {
		if schemaFile != "" {
			return &ConfigError{File: schemaFile, Line: 1, Err: fmt.Errorf("the reference schema does not apply after it: %w", pgMessage(err))}
		}
		return fmt.Errorf("preflight: %w", err)
	}
	sqlOf := storeSQL(queries)
	for _, r := range required {
		sql, q := sqlOf[r.name], qs[r.name]
		if _, err := conn.Prepare(ctx, "", sql); err != nil {
			return &ConfigError{File: queriesFile, Line: queryLine(q, sql, err), Query: r.name, Err: pgMessage(err)}
		}
	}
	return nil
}

// queryLine is the line of the queries file where q's error is: at the
// error's position in sql (q as the store runs it), else q's first line.
func queryLine(q Query, sql string, err error) int {
	// The query's SQL starts the line after its header; the rewrite may
	// have put lines of its own in front.
	shift := strings.Count(sql, "\n") - strings.Count(q.SQL, "\n")
	return q.Line + max(lineOf(sql, 0, err)-shift, 1)
}

// pgMessage is a server error as a person reads it: the message, and
// the hint if any, without pgx's SQLSTATE decoration.
func pgMessage(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return err
	}
	msg := pe.Message
	if pe.Hint != "" {
		msg += " (hint: " + pe.Hint + ")"
	}
	return errors.New(msg)
}

// lineOf is the line of src at the error's position (1-based characters,
// as PostgreSQL reports it), offset by base lines; 1 if unknown.
func lineOf(src string, base int, err error) int {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Position <= 0 {
		return base + 1
	}
	r := []rune(src)
	n := min(int(pe.Position)-1, len(r))
	return base + 1 + strings.Count(string(r[:n]), "\n")
}
