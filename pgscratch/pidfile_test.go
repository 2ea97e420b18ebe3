package pgscratch

import (
	"os"
	"path/filepath"
	"testing"
)

// postmaster.pid's lines: the shared memory id on the seventh, the status
// on the eighth, both only for the server whose pid is on the first.
func TestPidFile(t *testing.T) {
	dir := t.TempDir()
	pid := "4242\n/data\n1796398560\n5432\n/sock\n127.0.0.1\n  10010622   1507349\nready   \n"
	if err := os.WriteFile(filepath.Join(dir, "postmaster.pid"), []byte(pid), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := shmID(dir); got != "1507349" {
		t.Fatalf("shmID = %q, want 1507349", got)
	}
	if ready, readable := pidFileReady(dir, 4242); !ready || !readable {
		t.Fatal("server 4242 says ready, pidFileReady says not")
	}
	if ready, _ := pidFileReady(dir, 4243); ready {
		t.Fatal("a file left by server 4242 made server 4243 ready")
	}
	empty := t.TempDir()
	if ready, readable := pidFileReady(empty, 4242); shmID(empty) != "" || ready || !readable {
		t.Fatal("no postmaster.pid yet: want no id, not ready, and worth reading again")
	}
	if shmAttached("no-such-segment") {
		t.Fatal("a segment that does not exist is attached")
	}
}
