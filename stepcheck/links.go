package stepcheck

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// settleTimeout bounds the wait for an actor's old sessions to end.
const settleTimeout = 30 * time.Second // generous: a loaded machine is slow, not broken

// appName is the application_name of actor a's sessions, by which the
// harness finds them in pg_stat_activity.
func appName(a harness.Actor) string { return "outboxcheck-" + a.String() }

// links gives every actor its own connection string. With a fault net,
// producer, dispatchers and consumers go through their own proxy; the
// operator (and the harness's read-backs) always go direct.
type links struct {
	base *url.URL
	net  *faults.Net // nil: no network faults
}

func newLinks(dbURL string, withFaults bool) (*links, error) {
	u, err := url.Parse(dbURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("properties: DatabaseURL must be a postgres:// URL")
	}
	l := &links{base: u}
	if withFaults {
		l.net = faults.NewNet(u.Host)
	}
	return l, nil
}

func (l *links) connString(a harness.Actor) (string, error) {
	u := *l.base
	if l.net != nil && a.Role != harness.Operator {
		addr, err := l.net.Link(a.String())
		if err != nil {
			return "", err
		}
		u.Host = addr
	}
	q := u.Query()
	q.Set("application_name", appName(a))
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func (l *links) close() {
	if l.net != nil {
		l.net.Close()
	}
}

// settle makes every operation actor a has started final: it cuts the
// actor's link (whatever was in flight is lost) and waits until the server
// has no session of the actor left. Only then may an unknown outcome be
// resolved by reading the database (docs/faults.md).
func (m *machine) settle(t *rapid.T, a harness.Actor) {
	if m.links.net == nil || a.Role == harness.Operator {
		return
	}
	defer m.since(harness.SpentSettle, time.Now())
	m.fresh[a] = true // its next call opens a new session
	m.unheard[a] = true
	if err := m.links.net.Cut(a.String()); err != nil {
		m.infra(t, "settle", err)
	}
	if err := m.waitGone(appName(a)); err != nil {
		m.infra(t, "settle "+a.String(), err)
	}
	m.endHolds(a)
}

// waitGone ends every session named app and waits until none remains,
// ending again any that appears late. The harness ends them itself: a
// session idle in transaction, or waiting on a lock, after its client
// vanished would otherwise live on (no server-wide timeout does that work,
// docs/faults.md). A round that finds none to end is the answer.
func (m *machine) waitGone(app string) error {
	ctx, cancel := context.WithTimeout(m.ctx, settleTimeout)
	defer cancel()
	for {
		n, err := pgscratch.TerminateSessions(ctx, m.harness.conn, app)
		if err != nil || n == 0 {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d sessions of %s still open after %v", n, app, settleTimeout)
		case <-time.After(time.Millisecond): // a signalled backend exits within a few
		}
	}
}

// sessions counts this database's client sessions matching where. Inside
// a transaction (the gate's) pg_stat_activity is a snapshot taken at its
// first read, so the snapshot is cleared before every count.
func (m *machine) sessions(ctx context.Context, where string, args ...any) (int, error) {
	if _, err := m.harness.conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		return 0, err
	}
	var n int
	err := m.harness.conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND `+where, args...).Scan(&n)
	return n, err
}

// ownSession is the harness's own session, for pg_stat_activity.
type ownSession struct {
	url  string
	conn *pgx.Conn
}

// reconnect opens a new session, closing the old one. ctx bounds it.
func (h *ownSession) reconnect(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, h.url)
	if err != nil {
		return err
	}
	h.close()
	h.conn = conn
	return nil
}

func (h *ownSession) close() {
	if h.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
		defer cancel()
		h.conn.Close(ctx)
		h.conn = nil
	}
}
