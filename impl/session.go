package impl

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// ConnectTimeout bounds every connection attempt a Session makes.
const ConnectTimeout = 5 * time.Second

// Session is one actor's database session: a single connection, opened on
// first use and again after it was lost. Cut ends it abruptly, as a crash
// would, without telling the server. An actor uses its Session from one
// goroutine at a time; Cut and Close are safe from any goroutine.
type Session struct {
	cfg *pgx.ConnConfig

	mu   sync.Mutex
	conn *pgx.Conn
}

// NewSession parses connString; it does not connect.
func NewSession(connString string) (*Session, error) {
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > ConnectTimeout {
		cfg.ConnectTimeout = ConnectTimeout
	}
	return &Session{cfg: cfg}, nil
}

// Conn returns the open connection, connecting if there is none or the last
// one died.
func (s *Session) Conn(ctx context.Context) (*pgx.Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil && !s.conn.IsClosed() {
		return s.conn, nil
	}
	conn, err := pgx.ConnectConfig(ctx, s.cfg)
	if err != nil {
		return nil, err
	}
	s.conn = conn
	return conn, nil
}

// Cut drops the connection's socket without a goodbye, like a process that
// died: the server sees the client vanish and rolls back its transaction.
func (s *Session) Cut() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		_ = s.conn.PgConn().Conn().Close()
		s.conn = nil
	}
}

// Close ends the session politely.
func (s *Session) Close(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil
	}
	err := s.conn.Close(ctx)
	s.conn = nil
	return err
}
