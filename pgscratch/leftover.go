package pgscratch

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Leftover is a database on a server that this process did not create
// and that has the tool's name or carries its marker: either the tool's
// (Refused is "") or one it must leave alone, and why.
type Leftover struct {
	Name string
	// Refused, if not "", says why the database is not provably the
	// tool's. Such a database is never dropped, and the fields below are
	// zero: what its comment says proves nothing.
	Refused string
	Host    string // the run that made it: its host, pid and start
	PID     int
	Started time.Time
	// Gone says its run provably ended: same host and pid namespace,
	// process dead.
	Gone bool
}

// Ours reports whether the database is verified as the tool's.
func (l Leftover) Ours() bool { return l.Refused == "" }

func (l Leftover) String() string {
	if !l.Ours() {
		return l.Name
	}
	state := "may still run"
	if l.Gone {
		state = "gone"
	}
	return fmt.Sprintf("%s (pid %d on %s, started %s, %s)", l.Name, l.PID, l.Host, l.Started.Format(time.RFC3339), state)
}

// leftover judges d: verified or refused, and if verified, whether its
// run is gone.
func leftover(d dbRow, s server, key []byte, keyErr error) Leftover {
	o, why := verify(d, s, key, keyErr)
	if why != "" {
		return Leftover{Name: d.Name, Refused: why}
	}
	return Leftover{Name: d.Name, Host: o.Host, PID: o.PID, Started: o.Started, Gone: o.gone()}
}

// Leftovers lists the databases on the server, other than those this
// process created, that have the tool's name or carry its marker, each
// verified or refused. It creates the owner key if there is none yet.
func (c *Server) Leftovers(ctx context.Context) ([]Leftover, error) {
	ctx, cancel := context.WithTimeout(ctx, ddlTimeout)
	defer cancel()
	conn, err := connect(ctx, c.adminURL)
	if err != nil {
		return nil, fmt.Errorf("list databases: %w", err)
	}
	defer closeConn(conn)
	s, err := readServer(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("list databases: %w", err)
	}
	dbs, err := candidates(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("list databases: %w", err)
	}
	key, keyErr := ownerKey()
	var out []Leftover
	for _, d := range dbs {
		if !createdHere(d) {
			out = append(out, leftover(d, s, key, keyErr))
		}
	}
	return out, nil
}

// candidates reads the databases that have the tool's prefix or mark.
func candidates(ctx context.Context, conn *pgx.Conn) ([]dbRow, error) {
	rows, err := conn.Query(ctx, "SELECT "+dbColumns+" FROM pg_database d WHERE d.datname LIKE $1 OR shobj_description(d.oid, 'pg_database') LIKE $2 ORDER BY d.datname",
		`outboxcheck\_%`, ownerMark+"%")
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (dbRow, error) { return scanDB(r) })
}

// DropLeftover drops a database Leftovers listed, ending its sessions,
// after verifying it again on the same session: ErrNotOwned (and why) if
// it is not the tool's. One already gone is no error.
func (c *Server) DropLeftover(ctx context.Context, l Leftover) error {
	ctx, cancel := context.WithTimeout(ctx, ddlTimeout)
	defer cancel()
	conn, err := connect(ctx, c.adminURL)
	if err != nil {
		return fmt.Errorf("drop database %s: %w", l.Name, err)
	}
	defer closeConn(conn)
	if err := checkOwned(ctx, conn, l.Name); err != nil {
		return err
	}
	return dropOwned(ctx, conn, l.Name)
}

// SweepLeftovers drops the tool's databases whose run is provably gone
// and returns them, and the rest of Leftovers: refused, or the tool's
// but their run may still be running.
func (c *Server) SweepLeftovers(ctx context.Context) (dropped, left []Leftover, err error) {
	all, err := c.Leftovers(ctx)
	if err != nil {
		return nil, nil, err
	}
	for i, l := range all {
		if !l.Ours() || !l.Gone {
			left = append(left, l)
			continue
		}
		if err := c.DropLeftover(ctx, l); err != nil {
			return dropped, append(left, all[i:]...), err
		}
		dropped = append(dropped, l)
	}
	return dropped, left, nil
}
