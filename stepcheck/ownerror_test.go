package stepcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// What the subject did itself, and what the run did to it: only the first
// can make a subject's operation broken.
func TestOwnError(t *testing.T) {
	pg := func(code string) error {
		return fmt.Errorf("claim (failed): %w", &pgconn.PgError{Code: code, Message: code})
	}
	for _, c := range []struct {
		name           string
		err            error
		clean, faulted bool // own in a fault-free run, own in a faulted one
	}{
		{"made up", errors.New("not implemented"), true, true},
		{"division by zero", pg("22012"), true, true},
		{"raise", pg("P0001"), true, true},
		{"not null", pg("23502"), true, true},
		{"serialization", pg("40001"), false, false},
		{"deadlock", pg("40P01"), false, false},
		{"admin shutdown", pg("57P01"), false, false},
		{"lock not available", pg("55P03"), false, false},
		{"idle in transaction timeout", pg("25P03"), false, false},
		{"connection exception", pg("08006"), false, false},
		{"deadline", fmt.Errorf("reset: %w", context.DeadlineExceeded), false, false},
		{"conn closed", fmt.Errorf("claim: %w", pgconn.ErrConnClosed), true, false},
		{"eof", fmt.Errorf("commit: %w", io.ErrUnexpectedEOF), true, false},
		{"broker refused", fmt.Errorf("publish: %w", ErrRefused), false, false},
		{"none", nil, false, false},
	} {
		if got := ownError(c.err, false); got != c.clean {
			t.Errorf("%s, fault-free: own %v, want %v", c.name, got, c.clean)
		}
		if got := ownError(c.err, true); got != c.faulted {
			t.Errorf("%s, faulted: own %v, want %v", c.name, got, c.faulted)
		}
	}
}
