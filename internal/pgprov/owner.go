package pgprov

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// A database the tool creates carries, as its comment, the owner mark
// followed by who made it: host, pid, start time and a random token that
// only the creating process holds. The comment alone proves nothing (any
// user may write one): a database is the tool's to reset or drop only if
// this process created it, token and all (owned). The rest lets a later
// run tell a database whose run is provably gone (same host, pid dead)
// and drop it.

// owner is what a database's comment says about the run that made it.
type owner struct {
	Host    string
	PIDNS   string // the pid namespace the pid is in (containers share hostnames)
	PID     int
	Started time.Time
	Token   string
}

func (o owner) comment() string {
	return fmt.Sprintf("%s; host=%s pidns=%s pid=%d started=%s token=%s", ownerMark, o.Host, o.PIDNS, o.PID, o.Started.UTC().Format(time.RFC3339), o.Token)
}

// parseOwner reads a comment; ok is false unless it starts with the mark.
// A bare mark (databases of older versions) gives a zero owner.
func parseOwner(comment string) (o owner, ok bool) {
	rest, ok := strings.CutPrefix(comment, ownerMark)
	if !ok {
		return owner{}, false
	}
	for _, f := range strings.Fields(strings.TrimPrefix(rest, ";")) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "host":
			o.Host = v
		case "pidns":
			o.PIDNS = v
		case "pid":
			o.PID, _ = strconv.Atoi(v)
		case "started":
			o.Started, _ = time.Parse(time.RFC3339, v)
		case "token":
			o.Token = v
		}
	}
	return o, true
}

// thisRun is the owner of the databases this process creates.
var thisRun = sync.OnceValue(func() owner {
	host, _ := os.Hostname()
	return owner{Host: host, PIDNS: pidNamespace(), PID: os.Getpid(), Started: time.Now()}
})

// pidNamespace names this process's pid namespace ("" if unknown): a pid
// is only evidence within it.
func pidNamespace() string {
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return strings.Trim(strings.TrimPrefix(ns, "pid:"), "[]")
}

// owned maps the databases this process created to their tokens.
var owned sync.Map // name → token

// gone reports whether o's run has provably ended: it ran on this host,
// in this pid namespace (two containers may share a hostname, not pids),
// and its process is dead. Anything else (another host or namespace, an
// unmarked owner, a live pid) may still be running.
func (o owner) gone() bool {
	host, _ := os.Hostname()
	ns := pidNamespace()
	return o.Host != "" && o.Host == host && ns != "" && o.PIDNS == ns && o.PID > 0 && !alive(o.PID)
}

// Leftover is a database of the tool's on a server, and who made it.
type Leftover struct {
	Name    string
	Host    string // "" if the mark names no owner (an older version)
	PID     int
	Started time.Time
	// Gone says its run provably ended: same host, process dead.
	Gone bool
}

func (l Leftover) String() string {
	if l.Host == "" {
		return l.Name + " (owner unknown)"
	}
	state := "may still run"
	if l.Gone {
		state = "gone"
	}
	return fmt.Sprintf("%s (pid %d on %s, started %s, %s)", l.Name, l.PID, l.Host, l.Started.Format(time.RFC3339), state)
}

// Leftovers lists the tool's databases on the server that this process
// did not create.
func (c *Cluster) Leftovers(ctx context.Context) ([]Leftover, error) {
	conn, err := connect(ctx, c.adminURL)
	if err != nil {
		return nil, fmt.Errorf("list databases: %w", err)
	}
	defer closeConn(conn)
	rows, err := conn.Query(ctx, "SELECT datname, shobj_description(oid, 'pg_database') FROM pg_database WHERE shobj_description(oid, 'pg_database') LIKE $1 ORDER BY datname", ownerMark+"%")
	if err != nil {
		return nil, fmt.Errorf("list databases: %w", err)
	}
	var out []Leftover
	for rows.Next() {
		var name, comment string
		if err := rows.Scan(&name, &comment); err != nil {
			return nil, fmt.Errorf("list databases: %w", err)
		}
		o, ok := parseOwner(comment)
		if _, mine := owned.Load(name); !ok || mine {
			continue
		}
		out = append(out, Leftover{Name: name, Host: o.Host, PID: o.PID, Started: o.Started, Gone: o.gone()})
	}
	return out, rows.Err()
}

// DropLeftover drops a leftover database of the tool's, ending its sessions.
func (c *Cluster) DropLeftover(ctx context.Context, l Leftover) error {
	ctx, cancel := context.WithTimeout(ctx, ddlTimeout)
	defer cancel()
	conn, err := connect(ctx, c.adminURL)
	if err != nil {
		return fmt.Errorf("drop database %s: %w", l.Name, err)
	}
	defer closeConn(conn)
	var comment *string
	err = conn.QueryRow(ctx, "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1", l.Name).Scan(&comment)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("drop database %s: %w", l.Name, err)
	}
	if _, ok := parseOwner(deref(comment)); !ok {
		return fmt.Errorf("%s: %w", l.Name, ErrNotOwned)
	}
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{l.Name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", l.Name, err)
	}
	return nil
}

// SweepLeftovers drops the tool's databases whose run is provably gone,
// and returns them.
func (c *Cluster) SweepLeftovers(ctx context.Context) ([]Leftover, error) {
	all, err := c.Leftovers(ctx)
	if err != nil {
		return nil, err
	}
	var dropped []Leftover
	for _, l := range all {
		if !l.Gone {
			continue
		}
		if err := c.DropLeftover(ctx, l); err != nil {
			return dropped, err
		}
		dropped = append(dropped, l)
	}
	return dropped, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
