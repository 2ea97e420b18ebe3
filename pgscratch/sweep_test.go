package pgscratch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// A cluster dir whose owner died is removed by the next start; the dirs of
// live owners, and dirs without an owner file, are left alone.
func TestSweepOrphans(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(name string, owner int) string {
		dir := filepath.Join(os.TempDir(), "outboxcheck-pg-"+name)
		if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
			t.Fatal(err)
		}
		if owner > 0 {
			if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(owner)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	orphan := mk("orphan", dead.Process.Pid)
	mine := mk("mine", os.Getpid())
	unmarked := mk("unmarked", 0)
	sweepOrphans()
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("orphan dir survived the sweep: %v", err)
	}
	for _, dir := range []string{mine, unmarked} {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("%s was removed: %v", dir, err)
		}
	}
}
