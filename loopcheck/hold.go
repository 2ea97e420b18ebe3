package loopcheck

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/harness"
)

// holder is the actor that holds transactions open: a session of its own,
// straight to the server, as a report or a pg_dump would be.
var holder = harness.Actor{Role: harness.Operator, N: 1}

// holdTx holds a transaction open on the subject's database for d of real
// time, as pg_dump or a long report does: REPEATABLE READ with its
// snapshot taken (it pins the xmin horizon, so nothing it can see is
// vacuumed away) and ACCESS SHARE on every table of the database (DDL,
// TRUNCATE and VACUUM FULL wait for it). The schedule goes on meanwhile;
// the final heal ends every hold. A correct outbox is at most slowed.
// It says whether the transaction was opened.
func (c *check) holdTx(d time.Duration) bool {
	at := c.record("HoldTransaction", "operator", fmt.Sprintf("for %v: a REPEATABLE READ snapshot and ACCESS SHARE on every table, as pg_dump holds", d), "")
	ctx, cancel := context.WithTimeout(c.ctx, d+c.opts.CallTimeout)
	tx, n, err := c.openHold(ctx)
	if err != nil {
		cancel()
		c.setResult(at, "error: "+err.Error())
		return false
	}
	c.tally.hold()
	c.holding.Add(1)
	c.setResult(at, fmt.Sprintf("holding %d tables", n))
	end := time.NewTimer(d)
	stop := make(chan struct{})
	c.holds = append(c.holds, stop)
	c.holdWG.Add(1)
	go func() {
		defer c.holdWG.Done()
		defer c.holding.Add(-1)
		defer cancel()
		select {
		case <-end.C:
			c.record("ReleaseTransaction", "operator", fmt.Sprintf("held for %v", d), "rolled back")
		case <-stop:
			end.Stop()
		}
		_ = tx.Rollback(ctx)
		_ = tx.Conn().Close(ctx)
	}()
	return true
}

// openHold connects and opens the held transaction; it says how many
// tables it locked.
func (c *check) openHold(ctx context.Context) (pgx.Tx, int, error) {
	cs, err := c.connString(holder)
	if err != nil {
		return nil, 0, err
	}
	conn, err := pgx.Connect(ctx, cs)
	if err != nil {
		return nil, 0, err
	}
	tx, n, err := lockAll(ctx, conn)
	if err != nil {
		_ = conn.Close(ctx)
	}
	return tx, n, err
}

func lockAll(ctx context.Context, conn *pgx.Conn) (pgx.Tx, int, error) {
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		return nil, 0, err
	}
	// lock_timeout: a subject's own DDL in progress must not wedge the
	// harness; the hold is then recorded as an error, and skipped.
	if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '500ms'"); err != nil {
		return nil, 0, err
	}
	var tables []string
	rows, err := tx.Query(ctx, `SELECT format('%I.%I', schemaname, tablename) FROM pg_tables
		WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`)
	if err == nil {
		tables, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err == nil && len(tables) > 0 {
		_, err = tx.Exec(ctx, "LOCK TABLE "+strings.Join(tables, ", ")+" IN ACCESS SHARE MODE")
	}
	if err == nil {
		_, err = tx.Exec(ctx, "SELECT txid_current()")
	}
	return tx, len(tables), err
}

// endHolds ends every held transaction now and waits for them.
func (c *check) endHolds() {
	for _, stop := range c.holds {
		close(stop)
	}
	c.holds = nil
	c.holdWG.Wait()
}
