package cdcloop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// slotName is the slot of database db: slots are the server's, so each
// database the harness hands out (one per schedule runner) has its own.
func slotName(db string) string { return db + "_cdc" }

// slotSetup bounds making a slot: the server waits for the transactions
// in progress in every database to end first, and a schedule running
// beside this one may hold one open for seconds.
const slotSetup = 30 * time.Second

// createSlot creates the relay's logical slot (pgoutput) at the server's
// current position, unless it exists: every commit after it is decoded
// for the relay.
func (s *Subject) createSlot(ctx context.Context) error {
	conn, err := s.admin.Conn(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, slotSetup)
	defer cancel()
	if _, err := conn.Exec(ctx, `SELECT pg_create_logical_replication_slot($1, 'pgoutput')
		WHERE NOT EXISTS (SELECT FROM pg_replication_slots WHERE slot_name = $1)`, s.slot); err != nil {
		return fmt.Errorf("create replication slot %s: %w", s.slot, err)
	}
	return nil
}

// restartSlot makes the slot start at the server's current position: the
// previous schedule's events are not this one's. How depends on the
// variant: the slot is moved on (the reference), dropped for the first
// relay to make (LateSlot), or nothing (TemporarySlot: relays make their
// own). Each first ends the sessions still streaming from the relay's
// slots.
func (s *Subject) restartSlot(ctx context.Context) error {
	conn, err := s.admin.Conn(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		busy, err := s.release(ctx, conn)
		if err == nil && !busy {
			switch {
			case s.opts.TemporarySlot:
				return nil
			case s.opts.LateSlot:
				_, err = conn.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1`, s.slot)
			default:
				_, err = conn.Exec(ctx, `SELECT pg_replication_slot_advance($1, pg_current_wal_lsn())`, s.slot)
				if err == nil {
					err = saveSlots(ctx, conn)
				}
			}
			if err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("restart replication slot %s: %w", s.slot, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// saveSlots makes the slot's new position survive a database crash: an
// advanced slot is saved to disk only at the next checkpoint, and a
// crash before it would bring the slot back to the previous schedule's
// events, which its consumer, emptied since, would take as new. A role
// that may not checkpoint is on a server the harness does not own, and
// never crashes.
func saveSlots(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, "CHECKPOINT")
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == "42501" { // insufficient_privilege
		return nil
	}
	return err
}

// release ends the sessions streaming from the relay's slots (its own
// and its variant's temporary ones) and says whether any was.
func (s *Subject) release(ctx context.Context, conn *pgx.Conn) (busy bool, err error) {
	rows, err := conn.Query(ctx, `SELECT active_pid FROM pg_replication_slots
		WHERE (slot_name = $1 OR starts_with(slot_name, $1 || '_t')) AND active_pid IS NOT NULL`, s.slot)
	if err != nil {
		return false, err
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return false, err
	}
	for _, pid := range pids {
		if _, err := conn.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
			return true, err
		}
	}
	return len(pids) > 0, nil
}

// dropSlot drops the relay's slot for good (Close).
func (s *Subject) dropSlot(ctx context.Context) error {
	conn, err := s.admin.Conn(ctx)
	if err != nil {
		return err
	}
	for {
		busy, err := s.release(ctx, conn)
		if err == nil && !busy {
			if _, err = conn.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1`, s.slot); err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("drop replication slot %s: %w", s.slot, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
