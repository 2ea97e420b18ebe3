package gate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// Exit codes.
const (
	ExitOK        = 0 // every property held (run); every mutant killed and the reference passed (mutants)
	ExitViolation = 1 // a property was violated (run); the kill matrix has a survivor (mutants)
	ExitUsage     = 2 // bad flags, arguments or configuration (a server's refusal no retry cures among them)
	ExitInfra     = 3 // infrastructure: PostgreSQL could not start, the cluster was lost, a harness deadline
	ExitSubject   = 4 // the subject could not be checked: one of its operations never succeeded
)

// Error is an error with the exit code it means. Quiet says it was
// already reported in full, so the command prints no line of its own.
type Error struct {
	Code  int
	Err   error
	Quiet bool
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Code is err's exit code: ExitOK for nil, an *Error's own, else
// ExitInfra (anything unforeseen is the plumbing's).
func Code(err error) int {
	if err == nil {
		return ExitOK
	}
	var c *Error
	if errors.As(err, &c) {
		return c.Code
	}
	return ExitInfra
}

// Quiet reports whether err was already told in full.
func Quiet(err error) bool {
	var c *Error
	return errors.As(err, &c) && c.Quiet
}

// Usagef is a usage or configuration error, exit 2.
func Usagef(format string, args ...any) error {
	return &Error{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// infraError is err as an infrastructure error, exit 3, which a CI job may
// retry; unless the server refused on grounds no retry cures (a
// *pgscratch.Refusal: a wrong password, a database that does not exist, no
// CREATEDB), which is the user's configuration, exit 2, the server's own
// message first.
func infraError(err error) error {
	var r *pgscratch.Refusal
	if errors.As(err, &r) {
		return &Error{Code: ExitUsage, Err: r}
	}
	return &Error{Code: ExitInfra, Err: fmt.Errorf("infrastructure error: %w", err)}
}

// OneLine folds a multi-line error (pgx lists every address it tried) into
// the one line a CI log shows.
func OneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}
