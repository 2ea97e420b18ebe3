package impl

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Claimed is an event a dispatcher holds under its claim.
type Claimed struct {
	ID          string
	AggregateID string
	EventType   string
	Sequence    int64
	Payload     []byte
	CreatedAt   time.Time
	Attempts    int
	ClaimID     string
	ExpiresAt   time.Time // the lease the claim was taken with
}

// Row is one outbox_events row as stored, for inspection and comparison.
type Row struct {
	ID             string
	AggregateID    string
	Payload        []byte
	Status         Status
	Attempts       int
	ClaimID        string // "" when NULL
	ClaimExpiresAt time.Time
	AvailableAt    time.Time
	CreatedAt      time.Time
	PublishedAt    time.Time
	LastError      string
}

// Stats are the operational counts the seed asks to monitor.
type Stats struct {
	Pending          int           // PENDING, FAILED or PUBLISHING: not yet out
	OldestPendingAge time.Duration // now minus created_at of the oldest of those
	Failed           int
	Dead             int
}

// Store runs the outbox queries over one actor's session. Every method
// takes now from its caller: the store never reads a clock.
type Store struct {
	Session *Session
	Queries Queries
}

// NewStore is a store with the seed's queries.
func NewStore(s *Session) *Store { return &Store{Session: s, Queries: DefaultQueries()} }

// Claim takes up to limit due events under one fresh claim_id for lease,
// in one statement with FOR UPDATE SKIP LOCKED.
func (s *Store) Claim(ctx context.Context, now time.Time, lease time.Duration, limit int, claimID string) ([]Claimed, error) {
	const op = "claim"
	conn, err := s.Session.Conn(ctx)
	if err != nil {
		return nil, definite(op, err)
	}
	expires := now.Add(lease)
	rows, err := conn.Query(ctx, s.Queries.Claim, now, limit, claimID, expires)
	if err != nil {
		return nil, afterSend(op, err)
	}
	out, err := CollectClaimed(rows, expires)
	if err != nil {
		return nil, afterSend(op, err)
	}
	return out, nil
}

// BuryExpired runs Queries.BuryExpired, if set: an event whose claim
// expired at maxAttempts becomes DEAD. It returns how many did.
func (s *Store) BuryExpired(ctx context.Context, now time.Time, maxAttempts int) (int, error) {
	if s.Queries.BuryExpired == "" {
		return 0, nil
	}
	return s.exec(ctx, "bury expired", s.Queries.BuryExpired, now, maxAttempts)
}

// CollectClaimed reads a claim's rows (id, aggregate_id, event_type,
// sequence, payload, created_at, attempts, claim_id), taken with a lease
// until expires.
func CollectClaimed(rows pgx.Rows, expires time.Time) ([]Claimed, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Claimed, error) { return ScanClaimed(r, expires) })
}

// ScanClaimed reads one row of a claim (CollectClaimed's columns), then
// into more the columns a variant's claim returns after them.
func ScanClaimed(r pgx.CollectableRow, expires time.Time, more ...any) (Claimed, error) {
	c := Claimed{ExpiresAt: expires}
	err := r.Scan(append([]any{&c.ID, &c.AggregateID, &c.EventType, &c.Sequence, &c.Payload, &c.CreatedAt, &c.Attempts, &c.ClaimID}, more...)...)
	c.CreatedAt = c.CreatedAt.UTC()
	return c, err
}

// MarkPublished records a publish the broker acknowledged. It changes the
// row only while this claim is current; changed reports whether it did.
func (s *Store) MarkPublished(ctx context.Context, id, claimID string, now time.Time) (bool, error) {
	return s.execRows(ctx, "mark published", s.Queries.MarkPublished, id, claimID, now)
}

// MarkFailed records a failed publish with the status and next attempt the
// caller chose, fenced like MarkPublished.
func (s *Store) MarkFailed(ctx context.Context, id, claimID string, status Status, availableAt time.Time, lastError string) (bool, error) {
	return s.execRows(ctx, "mark failed", s.Queries.MarkFailed, id, claimID, string(status), availableAt, lastError)
}

// Redrive puts a DEAD event back to PENDING, due now, with the same
// event_id and a fresh attempt budget. changed is false unless it was DEAD.
func (s *Store) Redrive(ctx context.Context, id string, now time.Time) (bool, error) {
	return s.execRows(ctx, "redrive", s.Queries.Redrive, id, now)
}

// Cleanup deletes PUBLISHED rows published at or before now-retention and
// returns how many. No other status is ever deleted.
func (s *Store) Cleanup(ctx context.Context, now time.Time, retention time.Duration) (int, error) {
	return s.exec(ctx, "cleanup", s.Queries.Cleanup, now.Add(-retention))
}

// NextAttemptAt is the earliest time a claim could find work: the next due
// available_at or the next lease expiry. ok is false when there is none.
func (s *Store) NextAttemptAt(ctx context.Context) (time.Time, bool, error) {
	conn, err := s.Session.Conn(ctx)
	if err != nil {
		return time.Time{}, false, definite("next attempt", err)
	}
	at, ok, err := scanNextAttempt(conn.QueryRow(ctx, s.Queries.NextAttemptAt))
	if err != nil {
		return time.Time{}, false, definite("next attempt", err)
	}
	return at, ok, nil
}

func scanNextAttempt(r pgx.Row) (time.Time, bool, error) {
	var at *time.Time
	if err := r.Scan(&at); err != nil || at == nil {
		return time.Time{}, false, err
	}
	return at.UTC(), true, nil
}

// Stats reads the monitoring counts at now.
func (s *Store) Stats(ctx context.Context, now time.Time) (Stats, error) {
	conn, err := s.Session.Conn(ctx)
	if err != nil {
		return Stats{}, definite("stats", err)
	}
	st, err := scanStats(conn.QueryRow(ctx, s.Queries.Stats), now)
	if err != nil {
		return Stats{}, definite("stats", err)
	}
	return st, nil
}

func scanStats(r pgx.Row, now time.Time) (Stats, error) {
	var st Stats
	var oldest *time.Time
	if err := r.Scan(&st.Pending, &oldest, &st.Failed, &st.Dead); err != nil {
		return Stats{}, err
	}
	if oldest != nil {
		st.OldestPendingAge = now.Sub(*oldest)
	}
	return st, nil
}

// Rows reads every outbox row, ordered by id, for per-event inspection.
func (s *Store) Rows(ctx context.Context) ([]Row, error) {
	conn, err := s.Session.Conn(ctx)
	if err != nil {
		return nil, definite("rows", err)
	}
	out, err := collectRows(conn.Query(ctx, rowsSQL))
	if err != nil {
		return nil, definite("rows", err)
	}
	return out, nil
}

const rowsSQL = `SELECT id, aggregate_id, payload::text, status, attempts,
		COALESCE(claim_id::text, ''), claim_expires_at, available_at, created_at, published_at,
		COALESCE(last_error, '') FROM outbox_events ORDER BY id`

func collectRows(rows pgx.Rows, err error) ([]Row, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Row, error) {
		var row Row
		var payload string
		var expires, published *time.Time
		err := r.Scan(&row.ID, &row.AggregateID, &payload, &row.Status, &row.Attempts, &row.ClaimID,
			&expires, &row.AvailableAt, &row.CreatedAt, &published, &row.LastError)
		row.Payload = []byte(payload)
		row.ClaimExpiresAt, row.PublishedAt = utcOrZero(expires), utcOrZero(published)
		row.AvailableAt, row.CreatedAt = row.AvailableAt.UTC(), row.CreatedAt.UTC()
		return row, err
	})
}

func (s *Store) execRows(ctx context.Context, op, sql string, args ...any) (bool, error) {
	n, err := s.exec(ctx, op, sql, args...)
	return n > 0, err
}

// exec runs one statement and says how many rows it changed.
func (s *Store) exec(ctx context.Context, op, sql string, args ...any) (int, error) {
	conn, err := s.Session.Conn(ctx)
	if err != nil {
		return 0, definite(op, err)
	}
	tag, err := conn.Exec(ctx, sql, args...)
	if err != nil {
		return 0, afterSend(op, err)
	}
	return int(tag.RowsAffected()), nil
}

func utcOrZero(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}
