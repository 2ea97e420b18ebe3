package gate

import (
	"os"
	"path/filepath"
	"testing"
)

// A run that ends before its report removes the directories it made for
// it, and nothing else: not a directory the user made, not one that
// holds a file.
func TestMadeReportDirGoesAgainUnlessItHoldsAFile(t *testing.T) {
	root := t.TempDir()
	abs, made, err := MakeReportDir(filepath.Join(root, "a", "b"))
	if err != nil || made != filepath.Join(root, "a") || abs != filepath.Join(root, "a", "b") {
		t.Fatalf("MakeReportDir: %q, made %q, %v", abs, made, err)
	}
	RemoveMadeReportDir(made)
	if _, err := os.Stat(filepath.Join(root, "a")); !os.IsNotExist(err) {
		t.Fatalf("the made directory is still there: %v", err)
	}

	users := filepath.Join(root, "users")
	if err := os.Mkdir(users, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, made, err = MakeReportDir(users); err != nil || made != "" {
		t.Fatalf("a directory the user made counts as made: %q, %v", made, err)
	}
	RemoveMadeReportDir(made)
	if _, err := os.Stat(users); err != nil {
		t.Fatalf("the user's directory went: %v", err)
	}

	_, made, err = MakeReportDir(filepath.Join(root, "c"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(made, "report.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	RemoveMadeReportDir(made)
	if _, err := os.Stat(filepath.Join(made, "report.json")); err != nil {
		t.Fatalf("a made directory holding a file went: %v", err)
	}
}
