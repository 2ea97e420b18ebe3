package loopcheck

import (
	"context"
	"database/sql"
	"database/sql/driver"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/outboxcheck/outboxcheck/harness"
)

// sqlProducer is the producer's session for an SQLEnqueuer: a *sql.DB of
// pgx's stdlib driver on the producer's link, holding one *sql.Conn.
// Every transaction runs on that connection under the call's deadline:
// database/sql hands the context to the driver for each statement and
// for the COMMIT, and rolls the transaction back when it ends.
type sqlProducer struct {
	connString func() string
	enq        SQLEnqueuer
	db         *sql.DB
	conn       *sql.Conn
}

func (s *sqlProducer) begin(ctx context.Context) (producerTx, error) {
	if s.db == nil {
		cfg, err := pgx.ParseConfig(s.connString())
		if err != nil {
			return nil, err
		}
		s.db = stdlib.OpenDB(*cfg)
		s.db.SetMaxOpenConns(1)
	}
	if s.conn == nil {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		s.conn = conn
	}
	tx, err := s.conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return sqlTx{tx, s.enq}, nil
}

// discard closes the connection under database/sql's feet and tells it
// so (driver.ErrBadConn): it closes the connection and never hands it out
// again.
func (s *sqlProducer) discard() {
	if s.conn == nil {
		return
	}
	_ = s.conn.Raw(func(dc any) error {
		if c, ok := dc.(*stdlib.Conn); ok {
			_ = c.Conn().PgConn().Conn().Close()
		}
		return driver.ErrBadConn
	})
	_ = s.conn.Close() // already closed by Raw: sql.ErrConnDone
	s.conn = nil
}

func (s *sqlProducer) close() {
	if s.conn != nil {
		_ = s.conn.Close()
		s.conn = nil
	}
	if s.db != nil {
		_ = s.db.Close() // its connections and its opener goroutine
		s.db = nil
	}
}

type sqlTx struct {
	tx  *sql.Tx
	enq SQLEnqueuer
}

func (t sqlTx) enqueue(ctx context.Context, p harness.Payment) error {
	return t.enq.EnqueueSQL(ctx, t.tx, p)
}

// commit and rollback run under the context the transaction began with.
func (t sqlTx) commit(context.Context) error { return t.tx.Commit() }

func (t sqlTx) rollback(context.Context) error { return t.tx.Rollback() }
