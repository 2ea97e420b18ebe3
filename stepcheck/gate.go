package stepcheck

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/outboxcheck/outboxcheck/harness"
	"pgregory.net/rapid"
)

// gateWait bounds how long the gate waits for both calls to queue on it.
const gateWait = 2 * time.Second

// gate lines up concurrent calls so they really overlap: the harness takes
// a SHARE lock on every table of the database, which lets reads through but
// stops every write. The calls start, each queues on its first write, and
// once all of them wait (or gateWait passed) the gate opens and they run
// together. It knows nothing of the subject's tables: it locks them all.
type gate struct {
	tx pgx.Tx
}

// closeGate locks the tables; nil gate (and no error) if a lock is
// contended, in which case the calls simply run unsynchronised.
func (m *machine) closeGate(ctx context.Context) (*gate, error) {
	tx, err := m.harness.conn.Begin(ctx)
	if err != nil {
		return nil, err
	}
	var tables []string
	rows, err := tx.Query(ctx, `SELECT format('%I.%I', schemaname, tablename) FROM pg_tables
		WHERE schemaname NOT IN ('pg_catalog', 'information_schema', 'outboxcheck_clock') ORDER BY 1`)
	if err == nil {
		tables, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err == nil && len(tables) > 0 {
		if _, err = tx.Exec(ctx, "SET LOCAL lock_timeout = '500ms'"); err == nil {
			_, err = tx.Exec(ctx, "LOCK TABLE "+strings.Join(tables, ", ")+" IN SHARE MODE")
		}
	}
	if err != nil {
		tx.Rollback(ctx)
		return nil, nil
	}
	return &gate{tx: tx}, nil
}

// together runs one call per actor at the same instant, lined up by the
// gate: each call starts once the ones before it have queued (so ids are
// minted in a fixed order), then the gate opens and they run together.
// errs[i] is call i's error; an actor whose call failed is settled.
func (m *machine) together(t *rapid.T, actors []harness.Actor, calls []func(context.Context) error) []error {
	// The gate's own statements are quick (the harness's session is never
	// faulted), but it waits up to gateWait for each call to queue, and a
	// call held up by a fault takes up to CallTimeout to give up.
	ctx, cancel := context.WithTimeout(m.ctx, time.Duration(len(calls))*gateWait+m.opts.CallTimeout)
	defer cancel()
	start := time.Now()
	m.called = true // before the calls' goroutines: they may change what is stored
	g, err := m.closeGate(ctx)
	if err != nil {
		m.infra(t, "close gate", err)
	}
	errs := make([]error, len(calls))
	panics := make([]any, len(calls))
	apps := make([]string, len(calls))
	var finished atomic.Int32
	var wg sync.WaitGroup
	var gateErr error
	for i := range calls {
		apps[i] = appName(actors[i])
		wg.Go(func() {
			defer finished.Add(1)
			defer func() { panics[i] = recover() }() // m.do recorded it; re-raised below, on rapid's goroutine
			errs[i] = m.doAs(actors[i], harness.SpentNone, calls[i])
		})
		if gateErr == nil {
			gateErr = m.waitQueued(ctx, g, apps[:i+1], &finished)
		}
	}
	if gateErr == nil {
		gateErr = m.openGate(ctx, g)
	}
	wg.Wait()
	for _, p := range panics {
		if p != nil {
			panic(p)
		}
	}
	m.since(harness.SpentGate, start) // the calls' time too: they overlap the waits
	if gateErr != nil {
		m.infra(t, "gate", gateErr)
	}
	for i, err := range errs {
		if err != nil {
			m.settle(t, actors[i])
		}
	}
	return errs
}

// waitQueued waits until every session of apps waits on a lock or its call
// has returned (a call that writes nothing never queues); at most gateWait.
func (m *machine) waitQueued(ctx context.Context, g *gate, apps []string, finished *atomic.Int32) error {
	if g == nil {
		return nil
	}
	deadline := time.Now().Add(gateWait)
	for time.Now().Before(deadline) {
		n, err := m.sessions(ctx, "wait_event_type = 'Lock' AND application_name = ANY($1)", apps)
		if err != nil {
			g.tx.Rollback(ctx)
			return fmt.Errorf("gate: %w", err)
		}
		if n+int(finished.Load()) >= len(apps) {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// openGate releases the queued calls together.
func (m *machine) openGate(ctx context.Context, g *gate) error {
	if g == nil {
		return nil
	}
	return g.tx.Commit(ctx)
}
