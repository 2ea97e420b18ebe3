package pgscratch

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
// (see owner.go). The mark alone proves nothing: see claim.go.
const ownerMark = "created by outboxcheck; safe to drop"

// ddlTimeout bounds CREATE and DROP DATABASE.
const ddlTimeout = 30 * time.Second

// Database is a database the harness created for one run or one test.
type Database struct {
	Name string
	URL  string

	cluster *Server
}

// NewDatabase creates a fresh, empty database marked as the tool's own:
// its comment carries a token signed with the owner key, so that a later
// run may verify it and drop it once this one is gone. Without an owner
// key (EnsureOwnerKey) the token is random: only this process may reset
// or drop the database. A server that will not let the URL's role in or
// create it is a *Refusal (see there).
func (c *Server) NewDatabase(ctx context.Context) (*Database, error) {
	name := dbPrefix + randomHex(8)
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
	if err := mark(ctx, conn, name); err != nil {
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

// mark writes the owner mark on the database name this process just
// created, and records it as created here.
func mark(ctx context.Context, conn *pgx.Conn, name string) error {
	d, err := readDB(ctx, conn, name)
	if err != nil {
		return err
	}
	s, err := readServer(ctx, conn)
	if err != nil {
		return err
	}
	o := thisRun()
	if key, err := ownerKey(); err == nil {
		o.Token = token(key, s, d, o.body())
	} else {
		o.Token = randomHex(32)
	}
	owned.Store(name, ownedDB{OID: d.OID, Token: o.Token})
	_, err = conn.Exec(ctx, "COMMENT ON DATABASE "+pgx.Identifier{name}.Sanitize()+" IS '"+strings.ReplaceAll(o.comment(), "'", "''")+"'")
	return err
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
	if err := dropOwned(ctx, conn, d.Name); err != nil {
		return err
	}
	d.cluster.mu.Lock()
	delete(d.cluster.dbs, d)
	d.cluster.mu.Unlock()
	owned.Delete(d.Name)
	return nil
}

// ErrNotOwned is returned when asked to work in, or drop, a database that
// is not provably the tool's (see EnsureOwned).
var ErrNotOwned = errors.New("database is not outboxcheck's (not created by this outboxcheck run, nor marked by one under this user's owner key); refusing to touch it")

// EnsureOwned fails with ErrNotOwned, saying why, unless the database conn
// is connected to was created by this process, or verifies as the tool's:
// its name is one the tool makes (outboxcheck_<16 hex>), its owner is the
// role conn connects as, and its marker's token is signed with this OS
// user's owner key over the server, its name and OID. Callers check it
// before deleting rows.
func EnsureOwned(ctx context.Context, conn *pgx.Conn) error {
	ctx, cancel := context.WithTimeout(ctx, ddlTimeout)
	defer cancel()
	var name string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil {
		return fmt.Errorf("check database owner: %w", err)
	}
	return checkOwned(ctx, conn, name)
}

// checkOwned is EnsureOwned for the database name (conn may be on
// another); one that does not exist is no error.
func checkOwned(ctx context.Context, conn *pgx.Conn, name string) error {
	ctx, cancel := context.WithTimeout(ctx, ddlTimeout)
	defer cancel()
	d, err := readDB(ctx, conn, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // already gone
	}
	if err != nil {
		return fmt.Errorf("check database owner: %w", err)
	}
	if createdHere(d) {
		return nil
	}
	s, err := readServer(ctx, conn)
	if err != nil {
		return fmt.Errorf("check database owner: %w", err)
	}
	key, keyErr := ownerKey()
	if _, why := verify(d, s, key, keyErr); why != "" {
		return fmt.Errorf("%s: %w: %s", name, ErrNotOwned, why)
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
func Scratch(ctx context.Context) (c *Server, db *Database, cleanup func(), err error) {
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
