package pgscratch

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// TerminateSessions ends every session of conn's database whose
// application_name is appName, other than conn's own, with
// pg_terminate_backend, and returns how many it signalled. The harness
// ends a cut or killed actor's sessions itself (one idle in transaction
// or waiting on a lock after its client vanished would otherwise keep its
// locks for as long as TCP keepalive takes), instead of leaving it to
// server-wide timeouts that would also hide a subject's own stuck
// sessions (docs/faults.md).
//
// A signalled session ends soon after, not at once: it is still counted
// by a call made before it has exited, so callers wait for a call that
// returns 0. It is safe inside a transaction (pg_stat_activity's snapshot
// is cleared first). Ending another role's session needs that role's
// membership or pg_signal_backend; a superuser's, superuser. ctx bounds
// the call (connectTimeout if it has no deadline).
func TerminateSessions(ctx context.Context, conn *pgx.Conn, appName string) (int, error) {
	ctx, cancel := withDefaultDeadline(ctx)
	defer cancel()
	if _, err := conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		return 0, fmt.Errorf("terminate %s: %w", appName, err)
	}
	var n int
	err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = $1`, appName).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("terminate %s: %w", appName, err)
	}
	return n, nil
}

// withDefaultDeadline gives ctx a deadline of connectTimeout unless it
// has one: no database call may hang.
func withDefaultDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, connectTimeout)
}
