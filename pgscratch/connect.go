package pgscratch

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// connectTimeout bounds every connection attempt the provisioner makes.
const connectTimeout = 5 * time.Second

// connectAttempts is how many times connect tries a server that does not
// answer within connectTimeout: on a loaded machine a backend's fork and
// authentication can take seconds, and slow is not broken. A refusal or
// a bad password is not retried.
const connectAttempts = 3

func connect(ctx context.Context, url string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > connectTimeout {
		cfg.ConnectTimeout = connectTimeout
	}
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, connectTimeout)
		conn, err := pgx.ConnectConfig(actx, cfg)
		cancel()
		if err == nil || attempt == connectAttempts || ctx.Err() != nil || !timedOut(err) {
			return conn, err
		}
	}
}

// timedOut says whether a connection attempt failed by its own deadline
// (the server did not answer in time), not by a refusal or an error the
// server sent.
func timedOut(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// closeConn ends a session politely, within a deadline.
func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	conn.Close(ctx)
}
