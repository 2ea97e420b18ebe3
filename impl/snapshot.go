package impl

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Snapshot is what an inspector reads: every outbox row, the ledger, the
// monitoring counts and the next attempt.
type Snapshot struct {
	Rows          []Row
	Effects       []Effect
	Stats         Stats
	NextAttemptAt time.Time
	HasNext       bool
}

// Snapshot reads Rows, the ledger's Effects, Stats at now and
// NextAttemptAt in one round trip: the four queries go as one pipelined
// batch, which PostgreSQL runs in one implicit transaction, so they also
// see one snapshot of the database.
func (s *Store) Snapshot(ctx context.Context, now time.Time) (Snapshot, error) {
	conn, err := s.Session.Conn(ctx)
	if err != nil {
		return Snapshot{}, definite("snapshot", err)
	}
	var b pgx.Batch
	var snap Snapshot
	b.Queue(rowsSQL).Query(func(rows pgx.Rows) (err error) {
		snap.Rows, err = collectRows(rows, nil)
		return err
	})
	b.Queue(effectsSQL).Query(func(rows pgx.Rows) (err error) {
		snap.Effects, err = collectEffects(rows, nil)
		return err
	})
	b.Queue(s.Queries.Stats).QueryRow(func(r pgx.Row) (err error) {
		snap.Stats, err = scanStats(r, now)
		return err
	})
	b.Queue(s.Queries.NextAttemptAt).QueryRow(func(r pgx.Row) (err error) {
		snap.NextAttemptAt, snap.HasNext, err = scanNextAttempt(r)
		return err
	})
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		return Snapshot{}, definite("snapshot", err)
	}
	return snap, nil
}
