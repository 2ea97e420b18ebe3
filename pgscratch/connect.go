package pgscratch

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// connectTimeout bounds every connection attempt the provisioner makes.
const connectTimeout = 5 * time.Second

func connect(ctx context.Context, url string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > connectTimeout {
		cfg.ConnectTimeout = connectTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	return pgx.ConnectConfig(ctx, cfg)
}

// closeConn ends a session politely, within a deadline.
func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	conn.Close(ctx)
}
