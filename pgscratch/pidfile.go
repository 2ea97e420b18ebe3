package pgscratch

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// What a running server notes in its data directory's postmaster.pid:
// line 1 its pid, line 7 "key id" of its System V shared memory, line 8
// its status ("starting", "ready", "stopping"). Reading it is cheaper than
// a connection attempt, each of which forks a backend.

// shmDetachTimeout bounds the wait for a killed server's shared memory.
const shmDetachTimeout = 5 * time.Second

// pidFile returns the lines of dataDir's postmaster.pid; nil if unreadable.
func pidFile(dataDir string) []string {
	lines, _ := readPidFile(dataDir)
	return lines
}

func readPidFile(dataDir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return nil, err
	}
	return strings.Split(string(b), "\n"), nil
}

// shmID is the shared memory id the running server noted, or "".
func shmID(dataDir string) string {
	lines := pidFile(dataDir)
	if len(lines) < 7 {
		return ""
	}
	if f := strings.Fields(lines[6]); len(f) == 2 {
		return f[1]
	}
	return ""
}

// pidFileReady reports whether the server with process id pid says it
// accepts connections. A file left by an earlier server (another pid), or
// none yet, is not ready; readable is false if the file exists but cannot
// be read (then only a connection attempt can tell).
func pidFileReady(dataDir string, pid int) (ready, readable bool) {
	lines, err := readPidFile(dataDir)
	if err != nil {
		return false, os.IsNotExist(err)
	}
	return len(lines) >= 8 && strings.TrimSpace(lines[0]) == strconv.Itoa(pid) && strings.TrimSpace(lines[7]) == "ready", true
}

// shmAttached reports whether any process is still attached to the
// segment id, from /proc/sysvipc/shm (Linux); false where that cannot be
// read or the segment is gone.
func shmAttached(id string) bool {
	b, err := os.ReadFile("/proc/sysvipc/shm")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(l)
		if len(f) > 6 && f[1] == id {
			return f[6] != "0" // nattch
		}
	}
	return false
}

// waitShmDetached waits until no process is attached to segment id: a
// killed server's backends leave it a few milliseconds after the
// postmaster is reaped, and a server started before that refuses to start
// ("pre-existing shared memory block is still in use"). Best effort: it
// returns after shmDetachTimeout whatever the segment's state.
func waitShmDetached(id string) {
	if id == "" {
		return
	}
	deadline := time.Now().Add(shmDetachTimeout)
	for shmAttached(id) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}
