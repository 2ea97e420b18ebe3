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

	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// TestMain lets a test run the command itself in a child process (to
// SIGKILL it): OUTBOXCHECK_TEST_MAIN=1 makes the test binary outboxcheck;
// OUTBOXCHECK_TEST_NEWDB=URL makes it a run that creates its database
// there and dies without dropping it (see toolRun).
func TestMain(m *testing.M) {
	if os.Getenv("OUTBOXCHECK_TEST_MAIN") == "1" {
		main()
	}
	if url := os.Getenv("OUTBOXCHECK_TEST_NEWDB"); url != "" {
		newDatabaseAndDie(url)
	}
	os.Exit(m.Run())
}

// A run on a --database-url server that is SIGKILLed leaves its database;
// the next run drops it, because its marker verifies and its owner is
// provably gone, and says so. (owner_test.go: what it and clean leave.)
func TestKilledRunsDatabaseIsSwept(t *testing.T) {
	ctx := context.Background()
	server, err := pgscratch.Start(ctx, pgscratch.Options{NoDocker: true})
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	url := server.URL()
	isolateOwnerKey(t)

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
	if err != nil || len(left) != 1 || !left[0].Ours() || !left[0].Gone || left[0].PID != child.Process.Pid {
		t.Fatalf("leftovers after SIGKILL: %v, %v; want the child's one database, gone", left, err)
	}
	code, _, stderr := cliErr(t, "run", "--database-url", url, "--no-faults", "--checks", "1", "--report-dir", "")
	if code != exitOK || !strings.Contains(stderr, "dropped database "+left[0].Name) {
		t.Fatalf("next run: exit %d, stderr %q; want it to drop %s", code, stderr, left[0].Name)
	}
	if again, err := server.Leftovers(ctx); err != nil || len(again) != 0 {
		t.Fatalf("leftovers after the next run: %v, %v", again, err)
	}
}
