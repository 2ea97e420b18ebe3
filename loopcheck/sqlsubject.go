package loopcheck

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/harness"
)

// SQL hands a database/sql subject to Run, Exercise and Replay:
//
//	loopcheck.Exercise(t, loopcheck.SQL(newAdapter), opts)
//
// The subject's optional interfaces (DeadLetterer, Pender, Failpointer)
// are seen through it.
func SQL(newSubject NewSQLSubject) NewSubject {
	return func(ctx context.Context, env Env) (Subject, error) {
		s, err := newSubject(ctx, env)
		if s == nil {
			return nil, err
		}
		return sqlOnly{s}, err
	}
}

// sqlOnly is an SQLSubject as a Subject. The harness calls EnqueueSQL.
type sqlOnly struct{ SQLSubject }

var errSQLOnly = errors.New("loopcheck: a database/sql subject enqueues through EnqueueSQL, not Enqueue")

func (sqlOnly) Enqueue(context.Context, pgx.Tx, harness.Payment) error { return errSQLOnly }

// capability is s as a T, if s (or the SQLSubject SQL wrapped) is one.
func capability[T any](s Subject) (T, bool) {
	if w, ok := s.(sqlOnly); ok {
		t, ok := w.SQLSubject.(T)
		return t, ok
	}
	t, ok := s.(T)
	return t, ok
}
