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

// capability is s as a T, if s (or the SQLSubject SQL wrapped) is one,
// and, if s is an Announcer, it does not say it lacks T.
func capability[T any](s Subject) (T, bool) {
	var zero T
	if a, ok := s.(Announcer); ok && a.Lacks((*T)(nil)) {
		return zero, false
	}
	if w, ok := s.(sqlOnly); ok {
		t, ok := w.SQLSubject.(T)
		return t, ok
	}
	t, ok := s.(T)
	return t, ok
}

// Announcer is a Subject that has an optional interface's methods
// whether or not it has the capability, and says which it has only once
// it runs (a subject in another process announces them: proccheck).
// Lacks says whether it lacks the interface iface points to, given as a
// nil pointer: (*DeadLetterer)(nil), (*Pender)(nil), (*Failpointer)(nil)
// and so on. The harness then treats it as not implementing it.
type Announcer interface {
	Lacks(iface any) bool
}
