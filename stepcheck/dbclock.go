package stepcheck

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/model"
)

// clockSchema holds the harness's clock inside the run's database, for
// subjects that read the database's time (Options.DatabaseClock).
const clockSchema = "outboxcheck_clock"

// clockDDL installs the clock: a one-row table the harness sets to its
// own time, and functions of the names a subject's SQL reads time by.
// The database's search_path puts the schema before pg_catalog, so an
// unqualified now(), clock_timestamp(), statement_timestamp() or
// transaction_timestamp() in any new session resolves to these.
const clockDDL = `
CREATE SCHEMA IF NOT EXISTS outboxcheck_clock;
CREATE TABLE IF NOT EXISTS outboxcheck_clock.clock (t timestamptz NOT NULL);
CREATE OR REPLACE FUNCTION outboxcheck_clock.now() RETURNS timestamptz LANGUAGE sql STABLE AS 'SELECT t FROM outboxcheck_clock.clock';
CREATE OR REPLACE FUNCTION outboxcheck_clock.clock_timestamp() RETURNS timestamptz LANGUAGE sql STABLE AS 'SELECT t FROM outboxcheck_clock.clock';
CREATE OR REPLACE FUNCTION outboxcheck_clock.statement_timestamp() RETURNS timestamptz LANGUAGE sql STABLE AS 'SELECT t FROM outboxcheck_clock.clock';
CREATE OR REPLACE FUNCTION outboxcheck_clock.transaction_timestamp() RETURNS timestamptz LANGUAGE sql STABLE AS 'SELECT t FROM outboxcheck_clock.clock';`

// dbClock is the harness's clock in the database, set on a connection of
// its own (the gate's table locks leave its schema alone).
type dbClock struct {
	url  string
	conn *pgx.Conn
	at   time.Time // what the database's clock reads now
}

// installClock creates the clock in the run's database, at start, and
// makes every new session of it read time from there.
func installClock(ctx context.Context, url string, start time.Time) (*dbClock, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("database clock: %w", err)
	}
	if _, err = conn.Exec(ctx, clockDDL); err == nil {
		_, err = conn.Exec(ctx, `INSERT INTO outboxcheck_clock.clock SELECT $1 WHERE NOT EXISTS (SELECT FROM outboxcheck_clock.clock)`, start)
	}
	if err == nil {
		_, err = conn.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %s SET search_path = %s, pg_catalog, "$user", public`,
			pgx.Identifier{conn.Config().Database}.Sanitize(), clockSchema))
	}
	if err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("database clock: %w", err)
	}
	return &dbClock{url: url, conn: conn}, nil
}

// set makes the database's clock read now, if it does not already. A
// connection lost (the server crashed, CrashDatabase) is made again once,
// and the clock set whatever it read before the crash.
func (c *dbClock) set(ctx context.Context, now time.Time) error {
	if c == nil || c.at.Equal(now) {
		return nil
	}
	_, err := c.conn.Exec(ctx, `UPDATE outboxcheck_clock.clock SET t = $1`, now)
	if err != nil && c.conn.IsClosed() {
		var conn *pgx.Conn
		if conn, err = pgx.Connect(ctx, c.url); err == nil {
			c.conn = conn
			_, err = c.conn.Exec(ctx, `UPDATE outboxcheck_clock.clock SET t = $1`, now)
		}
	}
	if err != nil {
		c.at = time.Time{}
		return fmt.Errorf("database clock: %w", err)
	}
	c.at = now
	return nil
}

// advance moves the harness's clock by dt, and the database's with it.
func (m *machine) advance(t *rapid.T, dt time.Duration) {
	m.m = model.AdvanceClock(m.m, dt)
	m.syncClock(t)
}

// syncClock sets the database's clock to the harness's, for a subject
// that reads time from the database (Options.DatabaseClock).
func (m *machine) syncClock(t *rapid.T) {
	set := func(ctx context.Context) error { return m.run.clock.set(ctx, m.m.Now) } // reconnects a closed session
	if err := withRetries(m.ctx, m.opts.CallTimeout, set); err != nil {
		m.infra(t, "set the database clock", err)
	}
}

// forget makes the next set write the clock whatever it last wrote.
func (c *dbClock) forget() {
	if c != nil {
		c.at = time.Time{}
	}
}

func (c *dbClock) close() {
	if c != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c.conn.Close(ctx)
	}
}
