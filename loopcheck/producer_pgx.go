package loopcheck

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/harness"
)

// pgxProducer is the producer's session for a Subject's Enqueue.
type pgxProducer struct {
	connString func() string
	subj       Subject
	conn       *pgx.Conn
}

func (s *pgxProducer) begin(ctx context.Context) (producerTx, error) {
	if s.conn == nil || s.conn.IsClosed() {
		conn, err := pgx.Connect(ctx, s.connString())
		if err != nil {
			return nil, err
		}
		s.conn = conn
	}
	tx, err := s.conn.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return pgxTx{tx, s.subj}, nil
}

func (s *pgxProducer) discard() {
	if s.conn != nil {
		_ = s.conn.PgConn().Conn().Close()
	}
}

func (s *pgxProducer) close() {
	if s.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		s.conn.Close(ctx)
		s.conn = nil
	}
}

type pgxTx struct {
	tx   pgx.Tx
	subj Subject
}

func (t pgxTx) enqueue(ctx context.Context, p harness.Payment) error {
	return t.subj.Enqueue(ctx, t.tx, p)
}
func (t pgxTx) commit(ctx context.Context) error   { return t.tx.Commit(ctx) }
func (t pgxTx) rollback(ctx context.Context) error { return t.tx.Rollback(ctx) }
