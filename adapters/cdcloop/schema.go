package cdcloop

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ChangeSchema adds a column to the outbox table while the relays run, as
// a migration does (loopcheck.SchemaChanger): the n-th of a schedule.
// The producer names its columns, so its inserts go on; the relay's
// stream carries the table's new shape in a relation message before the
// next insert.
func (s *Subject) ChangeSchema(ctx context.Context, n int) error {
	conn, err := s.admin.Conn(ctx)
	if err != nil {
		return err
	}
	col := pgx.Identifier{fmt.Sprintf("migrated_%d", n)}.Sanitize()
	_, err = conn.Exec(ctx, "ALTER TABLE outbox_events ADD COLUMN IF NOT EXISTS "+col+" text")
	return err
}

// undoSchemaChanges drops the columns ChangeSchema added.
func undoSchemaChanges(ctx context.Context, conn *pgx.Conn) error {
	rows, err := conn.Query(ctx, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = 'outbox_events' AND column_name LIKE 'migrated\_%'`)
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	for _, c := range cols {
		if _, err := conn.Exec(ctx, "ALTER TABLE outbox_events DROP COLUMN IF EXISTS "+pgx.Identifier{c}.Sanitize()); err != nil {
			return fmt.Errorf("reset: %w", err)
		}
	}
	return nil
}
