// Package forwarder is a SQL-table forwarder, a small one written here in
// the shape of the libraries that forward messages from a table to a
// broker, and not a copy of any of them. A publisher writes a message row
// in the caller's transaction (Write): the table is an append-only log,
// in commit order. A forwarder reads it from its consumer group's offset,
// a batch at a time, forwards each message to the broker, and acks by
// moving the offset, all in one transaction that holds the group's offset
// row: one forwarder of a group works at a time, the others find the row
// locked and poll again. A failed forward counts against the message at
// the head of the log and backs off exponentially, capped; the log waits
// behind it (no dead letters: it retries for ever). A forwarder that dies
// before its ack forwards the batch again: at least once.
//
// The offset is (transaction_id, seq), not seq alone: a bigserial is drawn
// when a row is written, not when its transaction commits, so a reader
// that trusted seq would step over a row whose transaction was still open
// and never come back for it. Rows are read only from transactions older
// than every transaction still running (pg_snapshot_xmin of the reading
// statement's snapshot), in transaction order, so no later commit can
// land behind the offset.
//
// Its test runs it through outboxcheck's loop contract (loopcheck_test.go);
// it knows nothing of outboxcheck.
package forwarder

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Schema creates the log and the offsets; safe to run twice.
const Schema = `
CREATE TABLE IF NOT EXISTS fwd_messages (
    transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
    seq            bigserial NOT NULL,
    message_id     uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
    topic          text NOT NULL,
    key            text NOT NULL,
    payload        jsonb NOT NULL,
    written_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (transaction_id, seq)
);
CREATE TABLE IF NOT EXISTS fwd_offsets (
    consumer_group text PRIMARY KEY,
    last_tx        xid8 NOT NULL DEFAULT '0',
    last_seq       bigint NOT NULL DEFAULT 0,
    attempts       integer NOT NULL DEFAULT 0, -- failed forwards of the message after the offset
    retry_at       timestamptz,
    last_error     text
);`

// Message is a row of the log, and what goes on the wire. ID is fixed
// when the row is written: every forward of it sends the same.
type Message struct {
	ID      string
	Topic   string
	Key     string
	Payload []byte
}

// Write appends a message to the log in the caller's transaction: it is
// forwarded if and only if tx commits.
func Write(ctx context.Context, tx pgx.Tx, topic, key string, payload []byte) error {
	_, err := tx.Exec(ctx, `INSERT INTO fwd_messages (topic, key, payload) VALUES ($1, $2, $3)`, topic, key, payload)
	return err
}

// Forwarder forwards a consumer group's messages to a broker. Run as many
// as you like: one at a time holds the group.
type Forwarder struct {
	DB      *pgxpool.Pool
	Group   string
	Publish func(ctx context.Context, m Message) error
	// Backoff is the wait after the head message's first failed forward;
	// it doubles with every further failure, up to MaxBackoff. Defaults
	// 1 s and 1 min.
	Backoff, MaxBackoff time.Duration
	Batch               int           // messages per transaction; default 100
	Poll                time.Duration // wait when nothing was forwarded; default 1 s
	Timeout             time.Duration // bound on each statement and each publish; default 5 s
	// OnError, if set, is told why a round failed (a failed forward is
	// not an error of the round: it is recorded and retried).
	OnError func(error)
}

// Run forwards until ctx is done, then returns ctx's error. A failed round
// (the database unreachable, a statement timed out) is tried again after
// Poll: only ctx ends it.
func (f *Forwarder) Run(ctx context.Context) error {
	for {
		n, err := f.forward(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil && f.OnError != nil {
			f.OnError(err)
		}
		if err == nil && n == f.batch() {
			continue // a full batch: there may be more
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(def(f.Poll, time.Second)):
		}
	}
}

// RetryDelay is how long the head message waits after its k-th failed
// forward (k ≥ 1): Backoff doubled k-1 times, at most MaxBackoff.
func (f *Forwarder) RetryDelay(k int) time.Duration {
	d, ceiling := def(f.Backoff, time.Second), def(f.MaxBackoff, time.Minute)
	for range max(k-1, 0) {
		if d >= ceiling {
			break
		}
		d *= 2
	}
	return min(d, ceiling)
}

func (f *Forwarder) batch() int {
	if f.Batch <= 0 {
		return 100
	}
	return f.Batch
}

// row is a message at its place in the log.
type row struct {
	Message
	tx  string // transaction_id, as text
	seq int64
}

// errStopped: ctx ended while forwarding; nothing is acked.
var errStopped = errors.New("forwarder: stopped")

// forward takes the group, reads a batch past its offset, forwards it in
// order up to the first failure, and acks what the broker took (or
// records the failure), in one transaction. It returns how many it read.
func (f *Forwarder) forward(ctx context.Context) (int, error) {
	bctx, cancel := f.bound(ctx)
	tx, err := f.DB.Begin(bctx)
	cancel()
	if err != nil {
		return 0, err
	}
	defer f.rollback(ctx, tx)
	attempts, due, err := f.take(ctx, tx)
	if err != nil || !due {
		return 0, err
	}
	batch, err := f.read(ctx, tx)
	if err != nil || len(batch) == 0 {
		return 0, err
	}
	sent, perr := f.send(ctx, batch)
	if errors.Is(perr, errStopped) {
		return len(batch), perr // not acked: sent again
	}
	if err := f.ack(ctx, tx, batch, sent, attempts, perr); err != nil {
		return len(batch), err
	}
	sctx, cancel := f.bound(ctx)
	defer cancel()
	return len(batch), tx.Commit(sctx)
}

// take locks the group's offset row, or finds it held by another
// forwarder (due false). due is false too while the head message backs
// off. A group seen for the first time gets its row, from the start.
func (f *Forwarder) take(ctx context.Context, tx pgx.Tx) (attempts int, due bool, err error) {
	sctx, cancel := f.bound(ctx)
	defer cancel()
	lock := func() error {
		return tx.QueryRow(sctx, `SELECT attempts, coalesce(retry_at <= clock_timestamp(), true) FROM fwd_offsets
			WHERE consumer_group = $1 FOR UPDATE SKIP LOCKED`, f.Group).Scan(&attempts, &due)
	}
	err = lock()
	if errors.Is(err, pgx.ErrNoRows) { // held, or a new group
		if _, err = tx.Exec(sctx, `INSERT INTO fwd_offsets (consumer_group) VALUES ($1) ON CONFLICT DO NOTHING`, f.Group); err == nil {
			err = lock()
		}
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil // another forwarder holds the group
	}
	return attempts, due, err
}

// read returns the batch past the offset, from transactions that have
// ended (committed or not) before any still running began.
func (f *Forwarder) read(ctx context.Context, tx pgx.Tx) ([]row, error) {
	sctx, cancel := f.bound(ctx)
	defer cancel()
	rows, err := tx.Query(sctx, `SELECT m.transaction_id::text, m.seq, m.message_id::text, m.topic, m.key, m.payload
		FROM fwd_messages m JOIN fwd_offsets o ON o.consumer_group = $1
		WHERE (m.transaction_id, m.seq) > (o.last_tx, o.last_seq)
		  AND m.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
		ORDER BY m.transaction_id, m.seq
		LIMIT $2`, f.Group, f.batch())
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var m row
		return m, r.Scan(&m.tx, &m.seq, &m.ID, &m.Topic, &m.Key, &m.Payload)
	})
}

// send forwards batch in order and stops at the first failure: sent is
// how many the broker took, perr why the next one failed.
func (f *Forwarder) send(ctx context.Context, batch []row) (sent int, perr error) {
	for _, m := range batch {
		pctx, cancel := f.bound(ctx)
		perr = f.Publish(pctx, m.Message)
		cancel()
		if ctx.Err() != nil {
			return sent, errStopped
		}
		if perr != nil {
			return sent, perr
		}
		sent++
	}
	return sent, nil
}

// ack moves the offset past the sent messages. After a failure the head
// message (the first one not sent) counts one more failed attempt (the
// first, if the head moved) and waits its RetryDelay, from now.
func (f *Forwarder) ack(ctx context.Context, tx pgx.Tx, batch []row, sent, attempts int, perr error) error {
	sctx, cancel := f.bound(ctx)
	defer cancel()
	if sent > 0 {
		last := batch[sent-1]
		if _, err := tx.Exec(sctx, `UPDATE fwd_offsets SET last_tx = $2::xid8, last_seq = $3, attempts = 0, retry_at = NULL, last_error = NULL
			WHERE consumer_group = $1`, f.Group, last.tx, last.seq); err != nil {
			return err
		}
		attempts = 0
	}
	if perr == nil {
		return nil
	}
	_, err := tx.Exec(sctx, `UPDATE fwd_offsets SET attempts = $2, last_error = $3,
		retry_at = clock_timestamp() + $4::bigint * interval '1 microsecond' WHERE consumer_group = $1`,
		f.Group, attempts+1, perr.Error(), f.RetryDelay(attempts+1).Microseconds())
	return err
}

// rollback ends tx unless it committed, also when ctx is done (a stop):
// what was not acked is forwarded again.
func (f *Forwarder) rollback(ctx context.Context, tx pgx.Tx) {
	rctx, cancel := f.bound(context.WithoutCancel(ctx))
	defer cancel()
	_ = tx.Rollback(rctx)
}

func (f *Forwarder) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, def(f.Timeout, 5*time.Second))
}

func def(d, v time.Duration) time.Duration {
	if d <= 0 {
		return v
	}
	return d
}
