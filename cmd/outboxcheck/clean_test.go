package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/internal/pgprov"
)

// TestMain lets a test run the command itself in a child process (to
// SIGKILL it): OUTBOXCHECK_TEST_MAIN=1 makes the test binary outboxcheck.
func TestMain(m *testing.M) {
	if os.Getenv("OUTBOXCHECK_TEST_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// A run on a --database-url server that is SIGKILLed leaves its database;
// the next run drops it, because its owner is provably gone, and says so.
// `clean` lists and drops what is left; the server's other databases are
// never touched.
func TestKilledRunsDatabaseIsSwept(t *testing.T) {
	ctx := context.Background()
	server, err := pgprov.Start(ctx, pgprov.Options{NoDocker: true})
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	url := server.URL()

	child := exec.Command(os.Args[0], "run", "--database-url", url, "--no-faults", "--checks", "100000", "--report-dir", "")
	child.Env = append(os.Environ(), "OUTBOXCHECK_TEST_MAIN=1")
	out, _ := child.StdoutPipe()
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() && !strings.Contains(sc.Text(), "on PostgreSQL") {
	}
	time.Sleep(500 * time.Millisecond) // a few checks into its database
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()

	left, err := server.Leftovers(ctx)
	if err != nil || len(left) != 1 || !left[0].Gone || left[0].PID != child.Process.Pid {
		t.Fatalf("leftovers after SIGKILL: %v, %v; want the child's one database, gone", left, err)
	}
	code, _, stderr := cliErr(t, "run", "--database-url", url, "--no-faults", "--checks", "1", "--report-dir", "")
	if code != exitOK || !strings.Contains(stderr, "dropped database "+left[0].Name) {
		t.Fatalf("next run: exit %d, stderr %q; want it to drop %s", code, stderr, left[0].Name)
	}
	if again, err := server.Leftovers(ctx); err != nil || len(again) != 0 {
		t.Fatalf("leftovers after the next run: %v, %v", again, err)
	}

	// A database marked by a run that may still be running (another
	// host) is kept by a run, listed by clean --dry-run, dropped by
	// clean --all; an unmarked one is never listed.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	db := struct{ Name string }{"outboxcheck_elsewhere"}
	for _, sql := range []string{"CREATE DATABASE " + db.Name,
		"COMMENT ON DATABASE " + db.Name + " IS 'created by outboxcheck; safe to drop; host=elsewhere pid=1 started=2026-01-01T00:00:00Z token=x'"} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE users_own"); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := cliErr(t, "clean", "--database-url", url, "--dry-run")
	if code != exitOK || !strings.Contains(stdout, db.Name+" (pid 1 on elsewhere") || strings.Contains(stdout, "users_own") {
		t.Fatalf("clean --dry-run: exit %d:\n%s", code, stdout)
	}
	if code, stdout, _ = cliErr(t, "clean", "--database-url", url); code != exitOK || !strings.Contains(stdout, "kept "+db.Name) {
		t.Fatalf("clean: exit %d:\n%s", code, stdout)
	}
	if code, stdout, _ = cliErr(t, "clean", "--database-url", url, "--all"); code != exitOK || !strings.Contains(stdout, "dropped "+db.Name) {
		t.Fatalf("clean --all: exit %d:\n%s", code, stdout)
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = 'users_own'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the user's database: %d, %v", n, err)
	}
}
