package stepcheck

import (
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// ownError reports whether err, returned by one of the subject's calls,
// is the subject's own doing rather than something the run did to it. It
// is not when it is a timeout or a cancelled call; a server error of the
// kinds that faults, crashes and concurrent actors cause (a connection
// exception, a serialization failure or deadlock, a lock not available,
// an operator's intervention such as a shutdown or a cancelled query,
// insufficient resources, a system or internal error, an idle-in-
// transaction timeout); the broker's refusal or lost acknowledgement; or,
// in a run that injects faults (faulted), a lost, cut or refused
// connection. Anything else (a query the server refused for its own
// reasons, an error the subject made up) is the subject's own.
func ownError(err error, faulted bool) bool {
	switch {
	case err == nil, timedOut(err), errors.Is(err, ErrRefused), errors.Is(err, ErrAckLost):
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return !transientState(pe.Code)
	}
	return !faulted || !lostConnection(err)
}

// timedOut reports whether err is a deadline or a cancellation.
func timedOut(err error) bool {
	var ne net.Error
	return pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		(errors.As(err, &ne) && ne.Timeout())
}

// lostConnection reports whether err says the connection was lost, cut
// or refused.
func lostConnection(err error) bool {
	var (
		ce    *pgconn.ConnectError
		ne    net.Error
		errno syscall.Errno
	)
	return errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.As(err, &ce) || errors.As(err, &ne) || errors.As(err, &errno) ||
		pgconn.SafeToRetry(err)
}

// transientStates are the SQLSTATE classes (and codes) a correct subject
// meets under faults, crashes and concurrency.
var transientStates = []string{"08", "40", "53", "55", "57", "58", "XX", "25P03", "25P04"}

func transientState(code string) bool {
	return slices.ContainsFunc(transientStates, func(s string) bool { return len(code) >= len(s) && code[:len(s)] == s })
}
