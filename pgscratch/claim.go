package pgscratch

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
)

// A database is the tool's to reset or drop only if this process created
// it (createdHere), or verify finds no reason to doubt it: the comment is
// writable by the database's owner, so what it says proves nothing unless
// its token is an HMAC that only the owner key's holder could compute.

// dbPrefix begins the name of every database the tool creates; 16 hex
// digits follow (NewDatabase).
const dbPrefix = "outboxcheck_"

// toolName reports whether name is one NewDatabase makes.
func toolName(name string) bool {
	digits, ok := strings.CutPrefix(name, dbPrefix)
	return ok && len(digits) == 16 && strings.Trim(digits, "0123456789abcdef") == ""
}

// dbRow is what the server says about one database.
type dbRow struct {
	Name    string
	OID     uint32
	Owner   string // its owner role
	Comment string // "" if none
}

// dbColumns reads a dbRow from pg_database d.
const dbColumns = "d.datname, d.oid, pg_get_userbyid(d.datdba), coalesce(shobj_description(d.oid, 'pg_database'), '')"

func scanDB(row pgx.Row) (d dbRow, err error) {
	err = row.Scan(&d.Name, &d.OID, &d.Owner, &d.Comment)
	return d, err
}

// readDB reads the database named name; pgx.ErrNoRows if there is none.
func readDB(ctx context.Context, conn *pgx.Conn, name string) (dbRow, error) {
	return scanDB(conn.QueryRow(ctx, "SELECT "+dbColumns+" FROM pg_database d WHERE d.datname = $1", name))
}

// server is what a session knows of the server it is on, and of itself.
type server struct {
	Role  string // current_user: the role the tool connects as
	SysID string // pg_control_system's system_identifier; "" if unreadable
}

// readServer reads the session's server. A server that will not tell its
// system identifier (a managed service may not) gives "", every time.
func readServer(ctx context.Context, conn *pgx.Conn) (s server, err error) {
	if err = conn.QueryRow(ctx, "SELECT current_user").Scan(&s.Role); err != nil {
		return s, fmt.Errorf("read session role: %w", err)
	}
	if conn.QueryRow(ctx, "SELECT system_identifier::text FROM pg_control_system()").Scan(&s.SysID) != nil {
		s.SysID = ""
	}
	return s, ctx.Err()
}

// token is the proof a marker carries: the HMAC-SHA256 under key of the
// server, the database's name and OID (a comment copied onto another
// database, or onto a later one of the same name, fails) and body, the
// comment up to the token (so who made it cannot be altered either).
func token(key []byte, s server, d dbRow, body string) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "outboxcheck owner v1\x00%s\x00%s\x00%d\x00%s", s.SysID, d.Name, d.OID, body)
	return hex.EncodeToString(m.Sum(nil))
}

// Why a database is not provably the tool's.
const (
	whyName   = "name lacks the tool's prefix (" + dbPrefix + " and 16 hex digits)"
	whyNoMark = "it carries no outboxcheck marker"
	whyToken  = "its marker's token does not verify (copied or forged comment, or signed with another user's key)"
)

// verify says why d is not provably the tool's, "" if it is: its name is
// one the tool makes, its comment carries the mark, its owner is the
// session's role, and the mark's token is token(key, ...). keyErr is
// ownerKey's: without a key nothing verifies. o is what the mark says;
// it means nothing unless why is "".
func verify(d dbRow, s server, key []byte, keyErr error) (o owner, why string) {
	if !toolName(d.Name) {
		return o, whyName
	}
	o, body, marked := parseOwner(d.Comment)
	switch {
	case !marked:
		return o, whyNoMark
	case d.Owner != s.Role:
		return o, fmt.Sprintf("owned by role %s, not %s (the role this session connects as)", d.Owner, s.Role)
	case keyErr != nil:
		return o, "no owner key to verify its marker with (" + oneLine(keyErr.Error()) + ")"
	case !hmac.Equal([]byte(o.Token), []byte(token(key, s, d, body))):
		return o, whyToken
	}
	return o, ""
}

// owned maps the databases this process created to what it wrote.
var owned sync.Map // name → ownedDB

type ownedDB struct {
	OID   uint32
	Token string
}

// createdHere reports whether this process created d: the database of
// that name is still the one it created (same OID), and still carries the
// token it wrote.
func createdHere(d dbRow) bool {
	v, ok := owned.Load(d.Name)
	if !ok {
		return false
	}
	o, _, marked := parseOwner(d.Comment)
	mine := v.(ownedDB)
	return marked && d.OID == mine.OID && o.Token != "" && o.Token == mine.Token
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
