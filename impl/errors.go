package impl

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// OpError is an operation's failure together with what the caller can know
// about its effect. Indeterminate means the operation may or may not have
// taken effect: the request (or the COMMIT) was sent and no definite answer
// came back. FIELD-NOTES: a lost COMMIT reply can surface as "conn closed"
// with pgconn.SafeToRetry true although the commit happened, so the error
// text and SafeToRetry never decide this; only whether the request was sent
// and whether the server answered with an error do.
type OpError struct {
	Op            string
	Indeterminate bool
	Err           error
}

func (e *OpError) Error() string {
	kind := "failed"
	if e.Indeterminate {
		kind = "outcome unknown"
	}
	return fmt.Sprintf("%s (%s): %v", e.Op, kind, e.Err)
}

func (e *OpError) Unwrap() error { return e.Err }

// IsIndeterminate reports whether err says its operation may have taken
// effect. A nil error, or one that is not an *OpError, is determinate.
func IsIndeterminate(err error) bool {
	var op *OpError
	return errors.As(err, &op) && op.Indeterminate
}

// definite wraps an error raised before anything that could take effect was
// sent (or inside a transaction that never reached COMMIT).
func definite(op string, err error) error {
	if err == nil {
		return nil
	}
	return &OpError{Op: op, Err: err}
}

// afterSend wraps an error raised once a request that takes effect on its
// own (an autocommit statement, or COMMIT) may have reached the server. Only
// a server error reply or a failure to connect proves it did not apply.
func afterSend(op string, err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	var connErr *pgconn.ConnectError
	sure := errors.As(err, &pgErr) || errors.As(err, &connErr)
	return &OpError{Op: op, Indeterminate: !sure, Err: err}
}
