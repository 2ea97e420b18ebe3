package loopcheck

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// crashTimeout bounds a crash-db step: the kill, the restart and the
// server's crash recovery.
const crashTimeout = time.Minute

// crashDB crashes the server under everything (Options.CrashDatabase):
// every session of every actor ends at once, uncommitted work is rolled
// back, what committed stays, and the server recovers on the same port.
// A correct outbox reconnects and goes on: a relay that stops on a lost
// connection fails relay-liveness, one that loses what it was doing,
// no-loss. A CDC relay's slot may restart from an earlier position than
// the one it confirmed (a slot's position is saved at checkpoints): it
// reads events again, which its consumer dedupes. No relay is killed:
// the harness's own publishers stay good, as a broker's do when a
// database crashes.
func (c *check) crashDB() {
	if c.opts.CrashDatabase == nil {
		c.record("CrashDatabase", "operator", "", "skipped: the harness crashes no server it was not asked to (Options.CrashDatabase)")
		return
	}
	at := c.record("CrashDatabase", "database", "SIGKILL the postmaster and every backend, restart, recover", "")
	c.dispatcherFaults++ // every relay's session ended mid-way, as a kill ends it
	c.disturbFor(c.opts.Lease)
	ctx, cancel := context.WithTimeout(c.ctx, crashTimeout)
	defer cancel()
	start := time.Now()
	if err := c.opts.CrashDatabase(ctx); err != nil {
		c.tally.injected("crash-db", "database", false, 0)
		c.setResult(at, "error: "+err.Error())
		c.crashFailed = err
		return
	}
	c.tally.injected("crash-db", "database", true, 0)
	c.tally.mu.Lock()
	c.tally.dbCrashes++
	c.tally.mu.Unlock()
	res := "back after " + time.Since(start).Round(time.Millisecond).String()
	if err := c.runner.reconnect(ctx); err != nil {
		res += "; the harness's own session: " + err.Error()
		c.crashFailed = err
	}
	c.disturbFor(c.opts.Lease)
	c.setResult(at, res)
}

// reconnect opens the runner's own session again (a crash ended it).
func (r *runner) reconnect(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, r.opts.DatabaseURL)
	if err != nil {
		return err
	}
	old := r.admin
	r.admin = conn
	_ = old.Close(ctx)
	return nil
}
