package pgscratch

import (
	"context"
	"crypto/rand"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// fixture is a server with the tool's owner key isolated in a temp dir,
// and an admin session on it.
type fixture struct {
	t     *testing.T
	ctx   context.Context
	c     *Server
	admin *pgx.Conn
	key   []byte
	dead  int // a pid no process has
}

func newFixture(t *testing.T) *fixture {
	if _, err := findBinaries(); err != nil && os.Getenv(EnvDatabaseURL) == "" {
		t.Skip("no local PostgreSQL binaries")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	c, err := Start(ctx, Options{NoDocker: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	isolateOwnerKey(t) // after Start: a local server's template stays cached
	f := &fixture{t: t, ctx: ctx, c: c}
	if f.admin, err = connect(ctx, c.adminURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeConn(f.admin) })
	if f.key, err = ownerKey(); err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	f.dead = dead.Process.Pid
	return f
}

func (f *fixture) exec(sql string) {
	f.t.Helper()
	if _, err := f.admin.Exec(f.ctx, sql); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
}

// create makes a database (owned by role, if not ""), dropped at cleanup
// if it is still there.
func (f *fixture) create(name, role string) dbRow {
	f.t.Helper()
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if role != "" {
		sql += " OWNER " + pgx.Identifier{role}.Sanitize()
	}
	f.exec(sql)
	f.t.Cleanup(func() {
		f.admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	})
	return f.row(name)
}

func (f *fixture) row(name string) dbRow {
	f.t.Helper()
	d, err := readDB(f.ctx, f.admin, name)
	if err != nil {
		f.t.Fatal(err)
	}
	return d
}

func (f *fixture) comment(name, text string) {
	f.t.Helper()
	f.exec("COMMENT ON DATABASE " + pgx.Identifier{name}.Sanitize() + " IS '" + strings.ReplaceAll(text, "'", "''") + "'")
}

// markAs writes the mark a run of the tool with key would have written
// on d for owner o, token and all.
func (f *fixture) markAs(d dbRow, o owner, key []byte) string {
	f.t.Helper()
	s, err := readServer(f.ctx, f.admin)
	if err != nil {
		f.t.Fatal(err)
	}
	o.Token = token(key, s, d, o.body())
	f.comment(d.Name, o.comment())
	return o.comment()
}

// deadRun is the owner of a run of the tool on this host that is gone.
func (f *fixture) deadRun() owner {
	o := thisRun()
	o.PID = f.dead
	return o
}

func (f *fixture) exists(name string) bool {
	f.t.Helper()
	var n int
	if err := f.admin.QueryRow(f.ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n == 1
}

func toolDBName() string { return dbPrefix + randomHex(8) }

// Only a database whose marker verifies is the tool's: one a dead run of
// the tool made is swept; a copied, forged (zero token, or signed with
// another key) or missing marker, a name without the prefix, an owner
// other than the session's role, a comment copied onto a later database
// of the same name (also of one this process made): each is listed with its reason, survives the sweep
// and DropLeftover (clean --all), and is refused by EnsureOwned.
func TestOnlyAVerifiedMarkerMakesADatabaseTheTools(t *testing.T) {
	f := newFixture(t)
	mine, err := f.c.NewDatabase(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	gone := f.create(toolDBName(), "")
	goneMark := f.markAs(gone, f.deadRun(), f.key)
	live := f.create(toolDBName(), "")
	f.markAs(live, thisRun(), f.key) // this process is alive, but did not make it

	refused := map[string]string{} // name → the reason it must give
	add := func(name, why string) { refused[name] = why }
	copied := f.create(toolDBName(), "")
	f.comment(copied.Name, goneMark)
	add(copied.Name, whyToken)

	zero := f.create(toolDBName(), "")
	o := f.deadRun()
	o.Token = strings.Repeat("0", 64)
	f.comment(zero.Name, o.comment())
	add(zero.Name, whyToken)

	otherKey := make([]byte, ownerKeySize)
	rand.Read(otherKey)
	foreign := f.create(toolDBName(), "")
	f.markAs(foreign, f.deadRun(), otherKey)
	add(foreign.Name, whyToken)

	unmarked := f.create(toolDBName(), "")
	add(unmarked.Name, whyNoMark)

	f.exec("CREATE ROLE outboxcheck_other")
	t.Cleanup(func() { f.admin.Exec(context.Background(), "DROP ROLE IF EXISTS outboxcheck_other") })
	roled := f.create(toolDBName(), "outboxcheck_other")
	f.markAs(roled, f.deadRun(), f.key) // a valid token: only its owner says no
	add(roled.Name, "owned by role outboxcheck_other, not ")

	users := f.create("users_own", "")
	f.markAs(users, f.deadRun(), f.key)
	add(users.Name, whyName)

	later := f.create(toolDBName(), "")
	laterMark := f.markAs(later, f.deadRun(), f.key)
	f.exec("DROP DATABASE " + later.Name)
	f.create(later.Name, "")
	f.comment(later.Name, laterMark)
	add(later.Name, whyToken)

	// One this process made, dropped behind its back and made again by
	// someone else, comment and all, is this process's no more.
	replaced, err := f.c.NewDatabase(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	replacedMark := f.row(replaced.Name).Comment
	f.exec("DROP DATABASE " + replaced.Name)
	f.create(replaced.Name, "")
	f.comment(replaced.Name, replacedMark)
	add(replaced.Name, whyToken)

	left, err := f.c.Leftovers(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Leftover{}
	for _, l := range left {
		got[l.Name] = l
	}
	if _, ok := got[mine.Name]; ok {
		t.Errorf("Leftovers lists %s, which this process created", mine.Name)
	}
	if l := got[gone.Name]; !l.Ours() || !l.Gone || l.PID != f.dead {
		t.Errorf("a dead run's database: %+v; want ours and gone", l)
	}
	if l := got[live.Name]; !l.Ours() || l.Gone {
		t.Errorf("a live run's database: %+v; want ours, not gone", l)
	}
	for name, why := range refused {
		if l, ok := got[name]; !ok || !strings.Contains(l.Refused, why) || l.Gone || l.Host != "" {
			t.Errorf("%s: %+v, listed %v; want it refused: %s", name, l, ok, why)
		}
	}

	dropped, kept, err := f.c.SweepLeftovers(f.ctx)
	if err != nil || len(dropped) != 1 || dropped[0].Name != gone.Name || len(kept) != len(refused)+1 {
		t.Errorf("sweep: dropped %v, left %v, %v; want %s dropped, the %d others left", dropped, kept, err, gone.Name, len(refused)+1)
	}
	if f.exists(gone.Name) {
		t.Errorf("%s survived the sweep", gone.Name)
	}
	for name := range refused {
		if err := f.c.DropLeftover(f.ctx, Leftover{Name: name}); !errors.Is(err, ErrNotOwned) {
			t.Errorf("DropLeftover(%s) = %v, want ErrNotOwned", name, err)
		}
		if !f.exists(name) {
			t.Errorf("%s was dropped", name)
		}
		if err := f.ensureOwned(name); !errors.Is(err, ErrNotOwned) {
			t.Errorf("EnsureOwned(%s) = %v, want ErrNotOwned", name, err)
		}
	}
	for _, name := range []string{mine.Name, live.Name} {
		if err := f.ensureOwned(name); err != nil {
			t.Errorf("EnsureOwned(%s) = %v, want the tool's", name, err)
		}
	}
	if err := f.c.DropLeftover(f.ctx, Leftover{Name: live.Name}); err != nil || f.exists(live.Name) {
		t.Errorf("DropLeftover(%s), verified: %v", live.Name, err)
	}
}

func (f *fixture) ensureOwned(name string) error {
	f.t.Helper()
	u, err := withDatabase(f.c.adminURL, name)
	if err != nil {
		f.t.Fatal(err)
	}
	conn, err := connect(f.ctx, u)
	if err != nil {
		f.t.Fatal(err)
	}
	defer closeConn(conn)
	return EnsureOwned(f.ctx, conn)
}

// Without an owner key no marker verifies: only the databases this
// process creates are reset or dropped, and a later run cannot sweep
// them.
func TestWithoutAnOwnerKeyOnlyThisProcesssDatabases(t *testing.T) {
	f := newFixture(t)
	gone := f.create(toolDBName(), "")
	f.markAs(gone, f.deadRun(), f.key) // signed with the key there was
	withoutCacheDir(t)
	mine, err := f.c.NewDatabase(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.ensureOwned(mine.Name); err != nil {
		t.Errorf("EnsureOwned(%s), created here: %v", mine.Name, err)
	}
	if err := f.ensureOwned(gone.Name); !errors.Is(err, ErrNotOwned) || !strings.Contains(err.Error(), "no owner key") {
		t.Errorf("EnsureOwned(%s) = %v, want ErrNotOwned: no owner key", gone.Name, err)
	}
	dropped, left, err := f.c.SweepLeftovers(f.ctx)
	if err != nil || len(dropped) != 0 || len(left) != 1 || !strings.Contains(left[0].Refused, "no owner key") {
		t.Errorf("sweep without a key: dropped %v, left %v, %v; want %s left: no owner key", dropped, left, err, gone.Name)
	}
	if err := mine.Drop(f.ctx); err != nil || f.exists(mine.Name) {
		t.Errorf("drop %s, created here: %v", mine.Name, err)
	}
}

// A role that is no superuser (CREATEDB only, as most teams connect) makes
// databases that verify on its own sessions, system identifier and all;
// on another role's session they are refused: their owner is not it.
func TestAnOrdinaryRolesDatabasesVerify(t *testing.T) {
	f := newFixture(t)
	u, err := url.Parse(f.c.adminURL)
	if err != nil || u.Scheme == "" {
		t.Skipf("admin URL is no URL: %v", err)
	}
	f.exec("CREATE ROLE outboxcheck_user LOGIN CREATEDB PASSWORD 'pw'")
	t.Cleanup(func() { f.admin.Exec(context.Background(), "DROP ROLE IF EXISTS outboxcheck_user") })
	u.User = url.UserPassword("outboxcheck_user", "pw")
	c, err := Start(f.ctx, Options{DatabaseURL: u.String()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	db, err := c.NewDatabase(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	owned.Delete(db.Name) // as a later process sees it
	conn, err := connect(f.ctx, c.adminURL)
	if err != nil {
		t.Fatal(err)
	}
	defer closeConn(conn)
	if s, err := readServer(f.ctx, conn); err != nil || s.SysID == "" || s.Role != "outboxcheck_user" {
		t.Errorf("the role's server: %+v, %v; want its system identifier", s, err)
	}
	if err := checkOwned(f.ctx, conn, db.Name); err != nil {
		t.Errorf("on its role's session: %v", err)
	}
	if err := checkOwned(f.ctx, f.admin, db.Name); !errors.Is(err, ErrNotOwned) || !strings.Contains(err.Error(), "owned by role outboxcheck_user") {
		t.Errorf("on a superuser's session: %v; want ErrNotOwned: owned by role outboxcheck_user", err)
	}
	if err := c.DropLeftover(f.ctx, Leftover{Name: db.Name}); err != nil || f.exists(db.Name) {
		t.Errorf("drop it, verified, on its role's session: %v", err)
	}
}
