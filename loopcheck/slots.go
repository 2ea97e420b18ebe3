package loopcheck

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// retained is the most write-ahead log a replication slot of the
// subject's database held back at any step: a relay that reads the log
// (CDC) keeps its slot's position from moving while it is down, and the
// server keeps every byte since, without bound. A figure, not a
// judgement: how much is too much is the operator's to say.
type retained struct {
	bytes int64
	slot  string
}

// slotsQuery reads the WAL each of the database's slots retains.
const slotsQuery = `SELECT slot_name, pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint
FROM pg_replication_slots WHERE database = current_database() AND restart_lsn IS NOT NULL`

// sampleSlots reads how much WAL the database's slots retain now, on
// the runner's own connection, and keeps the most. A read that fails
// is skipped: nothing is concluded from it.
func (c *check) sampleSlots() {
	if c.runner.admin == nil {
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.CallTimeout)
	defer cancel()
	rows, err := c.runner.admin.Query(ctx, slotsQuery)
	if err != nil {
		return
	}
	type slot struct {
		Name  string
		Bytes int64
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[slot])
	if err != nil {
		return
	}
	c.tally.mu.Lock()
	defer c.tally.mu.Unlock()
	for _, s := range got {
		if s.Bytes > c.tally.retained.bytes {
			c.tally.retained = retained{bytes: s.Bytes, slot: s.Name}
		}
	}
}
