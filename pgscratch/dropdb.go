package pgscratch

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// dropOwned drops database name, which the caller has just verified is
// the tool's (checkOwned on conn): first the replication slots made in
// it, which DROP DATABASE refuses to drop with it (a CDC subject's slot
// left by a run that died), their walsenders ended; then the database,
// its sessions ended. A slot is dropped only because its database is
// provably the tool's: no other slot of the server is touched.
func dropOwned(ctx context.Context, conn *pgx.Conn, name string) error {
	if err := dropSlots(ctx, conn, name); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

// dropSlots drops every replication slot of database name, ending the
// session that holds one active; a walsender takes a moment to let go of
// its slot, so it tries again until ctx ends.
func dropSlots(ctx context.Context, conn *pgx.Conn, name string) error {
	for {
		rows, err := conn.Query(ctx, `SELECT slot_name, active_pid IS NOT NULL AND pg_terminate_backend(active_pid)
			FROM pg_replication_slots WHERE database = $1`, name)
		if err != nil {
			return fmt.Errorf("drop its replication slots: %w", err)
		}
		var slots []string
		active := 0
		var slot string
		var ended bool
		if _, err := pgx.ForEachRow(rows, []any{&slot, &ended}, func() error {
			if ended {
				active++
			} else {
				slots = append(slots, slot)
			}
			return nil
		}); err != nil {
			return fmt.Errorf("drop its replication slots: %w", err)
		}
		for _, slot := range slots {
			// One that turned active meanwhile, or went, is tried again.
			if _, err := conn.Exec(ctx, "SELECT pg_drop_replication_slot($1)", slot); err != nil {
				active++
			}
		}
		if active == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("drop its replication slots: %d still active: %w", active, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
