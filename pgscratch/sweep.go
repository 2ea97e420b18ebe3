package pgscratch

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ownerFile holds the pid of the process that made a cluster's temp dir.
const ownerFile = "owner.pid"

// markOwner records this process as the owner of root.
func markOwner(root string) error {
	return os.WriteFile(filepath.Join(root, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644)
}

// sweepOrphans removes the temp dirs of clusters whose owner died without
// cleaning up (SIGKILL, a test binary's timeout panic). Their servers are
// already gone: Pdeathsig killed them with the owner. A dir whose owner is
// alive, or that has no owner file yet, is left alone.
func sweepOrphans() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "outboxcheck-pg-*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || alive(pid) || serverAlive(dir) {
			continue
		}
		_ = os.RemoveAll(dir)
	}
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// serverAlive: the data dir's postmaster.pid names a live process.
func serverAlive(root string) bool {
	b, err := os.ReadFile(filepath.Join(root, "data", "postmaster.pid"))
	if err != nil {
		return false
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	return err == nil && pid > 0 && alive(pid)
}
