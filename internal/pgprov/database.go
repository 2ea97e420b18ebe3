package pgprov

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ownerMark begins the comment every database the tool creates carries
// (see owner.go). A database without it is never reset or dropped, nor
// one with it that this process did not create.
const ownerMark = "created by outboxcheck; safe to drop"

// ddlTimeout bounds CREATE and DROP DATABASE.
const ddlTimeout = 30 * time.Second

// Database is a database the harness created for one run or one test.
type Database struct {
	Name string
	URL  string

	cluster *Cluster
}

// NewDatabase creates a fresh, empty database marked as the tool's own.
// A server that will not let the URL's role in or create it is a
// *Refusal (see there).
func (c *Cluster) NewDatabase(ctx context.Context) (*Database, error) {
	name := "outboxcheck_" + randomHex(8)
	ctx, cancel := context.WithTimeout(ctx, ddlTimeout)
	defer cancel()
	conn, err := connect(ctx, c.adminURL)
	if err != nil {
		return nil, refused(fmt.Errorf("create database: %w", err), "connecting to "+redact(c.adminURL))
	}
	defer closeConn(conn)
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident+" TEMPLATE template0"); err != nil {
		return nil, refused(fmt.Errorf("create database %s: %w", name, err), "creating database "+name+" on "+redact(c.adminURL))
	}
	o := thisRun()
	o.Token = randomHex(16)
	owned.Store(name, o.Token)
	if _, err := conn.Exec(ctx, "COMMENT ON DATABASE "+ident+" IS '"+strings.ReplaceAll(o.comment(), "'", "''")+"'"); err != nil {
		return nil, fmt.Errorf("mark database %s: %w", name, err)
	}
	url, err := withDatabase(c.adminURL, name)
	if err != nil {
		return nil, err
	}
	d := &Database{Name: name, URL: url, cluster: c}
	c.mu.Lock()
	if c.dbs == nil {
		c.dbs = map[*Database]struct{}{}
	}
	c.dbs[d] = struct{}{}
	c.mu.Unlock()
	return d, nil
}

// Drop removes the database, ending any session still connected to it.
func (d *Database) Drop(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, ddlTimeout)
	defer cancel()
	conn, err := connect(ctx, d.cluster.adminURL)
	if err != nil {
		return fmt.Errorf("drop database %s: %w", d.Name, err)
	}
	defer closeConn(conn)
	if err := checkOwned(ctx, conn, d.Name); err != nil {
		return err
	}
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{d.Name}.Sanitize()+" WITH (FORCE)")
	if err != nil {
		return fmt.Errorf("drop database %s: %w", d.Name, err)
	}
	d.cluster.mu.Lock()
	delete(d.cluster.dbs, d)
	d.cluster.mu.Unlock()
	owned.Delete(d.Name)
	return nil
}

// ErrNotOwned is returned when asked to work in a database the tool did not
// create.
var ErrNotOwned = errors.New("database was not created by this outboxcheck run; refusing to touch it")

// EnsureOwned fails with ErrNotOwned unless the database conn is connected
// to carries the tool's mark. Callers check it before deleting rows.
func EnsureOwned(ctx context.Context, conn *pgx.Conn) error {
	var name string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil {
		return fmt.Errorf("check database owner: %w", err)
	}
	return checkOwned(ctx, conn, name)
}

func checkOwned(ctx context.Context, conn *pgx.Conn, name string) error {
	var mark *string
	err := conn.QueryRow(ctx,
		"SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1", name).Scan(&mark)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // already gone
	}
	if err != nil {
		return fmt.Errorf("check database owner: %w", err)
	}
	o, ok := parseOwner(deref(mark))
	token, mine := owned.Load(name)
	if !ok || !mine || o.Token != token.(string) {
		return fmt.Errorf("%s: %w", name, ErrNotOwned)
	}
	return nil
}

// withDatabase returns conn string s pointing at database name instead.
// It accepts both URL and keyword/value forms.
func withDatabase(s, name string) (string, error) {
	if strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") {
		u, err := url.Parse(s)
		if err != nil {
			return "", fmt.Errorf("database URL: %w", err)
		}
		u.Path = "/" + name
		return u.String(), nil
	}
	return s + " dbname=" + name, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return hex.EncodeToString(b)
}

// Scratch finds or starts a server (the order of Start) and creates a
// database on it for one run; cleanup drops the database and stops what
// Start started.
func Scratch(ctx context.Context) (c *Cluster, db *Database, cleanup func(), err error) {
	if c, err = Start(ctx, Options{}); err != nil {
		return nil, nil, nil, err
	}
	if db, err = c.NewDatabase(ctx); err != nil {
		c.Close()
		return nil, nil, nil, err
	}
	return c, db, func() {
		db.Drop(context.Background())
		c.Close()
	}, nil
}
