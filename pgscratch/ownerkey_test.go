package pgscratch

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// isolateOwnerKey points the tool's cache dir, and so its owner key, at a
// fresh temp dir for the rest of t, so that no test reads or writes the
// user's own key. It returns the dir the key lives in.
func isolateOwnerKey(t *testing.T) string {
	t.Helper()
	t.Setenv(EnvCacheDir, "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir, err := cacheDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Concurrent first uses agree on one key, made private (0600 in a 0700
// dir), and leave no temp file behind.
func TestOwnerKeyIsSharedAndPrivate(t *testing.T) {
	dir := isolateOwnerKey(t)
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := ownerKey()
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	for _, k := range keys {
		if len(k) != ownerKeySize || !bytes.Equal(k, keys[0]) {
			t.Fatalf("concurrent first uses disagree: %x vs %x", k, keys[0])
		}
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, ownerKeyFile): 0o600} {
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want mode %v", path, st.Mode().Perm(), err, want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%s holds %d entries, want the key alone", dir, len(ents))
	}
	if again, err := ownerKey(); err != nil || !bytes.Equal(again, keys[0]) {
		t.Errorf("a later use: %x, %v; want the same key", again, err)
	}
}

// A key others may have read or replaced is no key: nothing verifies.
func TestOwnerKeyRefusesWhatOthersCouldTouch(t *testing.T) {
	for name, spoil := range map[string]func(dir, key string) error{
		"key readable by others": func(_, key string) error { return os.Chmod(key, 0o644) },
		"dir writable by others": func(dir, _ string) error { return os.Chmod(dir, 0o777) },
		"key a symlink": func(dir, key string) error {
			if err := os.Rename(key, filepath.Join(dir, "elsewhere")); err != nil {
				return err
			}
			return os.Symlink(filepath.Join(dir, "elsewhere"), key)
		},
		"key truncated": func(_, key string) error { return os.WriteFile(key, []byte("short"), 0o600) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := isolateOwnerKey(t)
			if err := EnsureOwnerKey(); err != nil {
				t.Fatal(err)
			}
			if err := spoil(dir, filepath.Join(dir, ownerKeyFile)); err != nil {
				t.Fatal(err)
			}
			if k, err := ownerKey(); err == nil {
				t.Fatalf("got key %x, want an error", k)
			}
		})
	}
}

// Without a cache dir there is no key, and EnsureOwnerKey says so.
func TestNoCacheDirNoOwnerKey(t *testing.T) {
	withoutCacheDir(t)
	if err := EnsureOwnerKey(); err == nil {
		t.Fatal("EnsureOwnerKey succeeded without a cache dir")
	}
}

func withoutCacheDir(t *testing.T) {
	t.Setenv(EnvCacheDir, "")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
}
