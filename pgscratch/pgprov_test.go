package pgscratch

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestLocalClusterLifecycle(t *testing.T) {
	if _, err := findBinaries(); err != nil {
		t.Skip("no local PostgreSQL binaries")
	}
	ctx := context.Background()
	start := time.Now()
	c, err := Start(ctx, Options{NoDocker: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster ready in %v (version %s)", time.Since(start), c.Version)
	isolateOwnerKey(t)
	root := c.local.root
	if !c.Owned() || c.Source != SourceLocal {
		t.Fatalf("want an owned local cluster, got %s", c.Source)
	}

	// TCP needs the per-run password: the same URL without it is refused.
	noPass := strings.Replace(c.adminURL, c.local.password, "wrong", 1)
	if conn, err := connect(ctx, noPass); err == nil {
		conn.Close(ctx)
		t.Fatal("TCP login with a wrong password succeeded: auth is not password-based")
	}

	if st, err := os.Stat(c.local.logPath()); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("postgres.log: %v, %v; want it readable by its owner only (0600)", st.Mode(), err)
	}

	db, err := c.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := EnsureOwned(ctx, conn); err != nil {
		t.Fatalf("own database not recognised: %v", err)
	}
	conn.Close(ctx)

	// The maintenance database is not ours: refuse it.
	admin, err := connect(ctx, c.adminURL)
	if err != nil {
		t.Fatal(err)
	}
	if err := EnsureOwned(ctx, admin); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("EnsureOwned(postgres) = %v, want ErrNotOwned", err)
	}
	// A comment is no proof: a database that carries our own database's
	// mark, copied word for word, is still not this run's.
	var mark string
	if err := admin.QueryRow(ctx, "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1", db.Name).Scan(&mark); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{"CREATE DATABASE forged", "COMMENT ON DATABASE forged IS '" + mark + "'"} {
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	forgedURL, _ := withDatabase(c.adminURL, "forged")
	forged, err := connect(ctx, forgedURL)
	if err != nil {
		t.Fatal(err)
	}
	if err := EnsureOwned(ctx, forged); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("EnsureOwned(forged) = %v, want ErrNotOwned", err)
	}
	forged.Close(ctx)
	admin.Close(ctx)

	if err := db.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	pid := c.local.proc.Process.Pid
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatalf("temp dir %s survived Close", root)
	}
	if err := processAlive(pid); err == nil {
		t.Fatalf("postmaster %d survived Close", pid)
	}
}

func TestBadURLIsConfigurationError(t *testing.T) {
	_, err := Start(context.Background(), Options{DatabaseURL: "postgres://%zz"})
	if !errors.Is(err, ErrBadURL) {
		t.Fatalf("got %v, want ErrBadURL", err)
	}
}

func TestUnreachableURLIsInfrastructureError(t *testing.T) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	url := "postgres://u:p@127.0.0.1:" + itoa(port) + "/x?sslmode=disable&connect_timeout=1"
	_, err = Start(context.Background(), Options{DatabaseURL: url})
	if err == nil || errors.Is(err, ErrBadURL) {
		t.Fatalf("got %v, want a connection error", err)
	}
	if strings.Contains(err.Error(), ":p@") {
		t.Fatalf("error leaks the password: %v", err)
	}
}

func TestWithDatabase(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:p@h:5/db?sslmode=disable": "postgres://u:p@h:5/x?sslmode=disable",
		"postgresql://h/":                       "postgresql://h/x",
		"host=h user=u":                         "host=h user=u dbname=x",
	} {
		got, err := withDatabase(in, "x")
		if err != nil || got != want {
			t.Errorf("withDatabase(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := pgx.ParseConfig("host=h user=u dbname=x"); err != nil {
		t.Fatal(err)
	}
}

// A crashed server comes back on the same URL with every committed row.
func TestCrashKeepsCommittedRows(t *testing.T) {
	if _, err := findBinaries(); err != nil {
		t.Skip("no local PostgreSQL binaries")
	}
	ctx := context.Background()
	c, err := Start(ctx, Options{NoDocker: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	conn, err := connect(ctx, c.adminURL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE t (x int); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if err := c.Crash(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SELECT 1"); err == nil {
		t.Fatal("a session survived the crash")
	}
	conn, err = connect(ctx, c.adminURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 1 {
		t.Fatalf("after crash: %d rows, %v; want 1", n, err)
	}
}
