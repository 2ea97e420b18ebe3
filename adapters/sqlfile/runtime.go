package sqlfile

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// QueryError is the server's refusal of one of the team's queries while
// a run calls it (a division by zero, a RAISE, a constraint of the
// team's schema): past the preflight, but the team's all the same. It
// names the file, the line and the query as the preflight does.
type QueryError struct {
	File  string
	Line  int
	Query string
	Err   error // the call's error, a *pgconn.PgError inside
}

func (e *QueryError) Error() string {
	return fmt.Sprintf("%s:%d: query %s: %v", e.File, e.Line, e.Query, pgMessage(e.Err))
}

func (e *QueryError) Unwrap() error { return e.Err }

// named is the subject of a queries file: the calls that run the team's
// queries name them in their server errors.
type named struct {
	stepcheck.Subject
	file    string
	queries map[string]Query // by query name, as parsed
	sql     map[string]string
}

// name wraps err in a QueryError for query if the server refused it.
func (s *named) name(query string, err error) error {
	var pe *pgconn.PgError
	if err == nil || !errors.As(err, &pe) {
		return err
	}
	return &QueryError{File: s.file, Line: queryLine(s.queries[query], s.sql[query], err), Query: query, Err: err}
}

func (s *named) Claim(ctx context.Context, d int, now time.Time, limit int) ([]stepcheck.Claimed, error) {
	got, err := s.Subject.Claim(ctx, d, now, limit)
	return got, s.name("ClaimOutboxEvents", err)
}

func (s *named) MarkPublished(ctx context.Context, d int, c stepcheck.Claimed, now time.Time) (bool, error) {
	changed, err := s.Subject.MarkPublished(ctx, d, c, now)
	return changed, s.name("MarkOutboxEventPublished", err)
}

func (s *named) MarkFailed(ctx context.Context, d int, c stepcheck.Claimed, now time.Time, cause error) (bool, error) {
	changed, err := s.Subject.MarkFailed(ctx, d, c, now, cause)
	return changed, s.name("MarkOutboxEventFailed", err)
}

func (s *named) NextAttemptAt(ctx context.Context) (time.Time, bool, error) {
	at, ok, err := s.Subject.NextAttemptAt(ctx)
	return at, ok, s.name("GetNextOutboxAttemptAt", err)
}
