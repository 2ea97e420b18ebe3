package pgscratch

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ownerKeyFile, in the tool's cache directory (cacheDir), holds the random
// key this OS user's runs sign their databases' markers with. Only a
// process that can read it can make a marker that verifies, so a database
// whose marker verifies was made by the tool, for this user.
const ownerKeyFile = "owner.key"

const ownerKeySize = 32

// ownerKey returns this OS user's owner key, creating it on first use.
// Concurrent first uses agree on one key: each writes a temp file and
// links it into place, and the first link wins. It fails, and the caller
// must then prove nothing by a marker, when there is no cache directory,
// or the key or its directory may have been written or read by another
// user (not ours, or group or world writable; the key also not readable).
func ownerKey() ([]byte, error) {
	dir, err := cacheDir()
	if err != nil {
		return nil, fmt.Errorf("owner key: %w", err)
	}
	path := filepath.Join(dir, ownerKeyFile)
	key, err := readOwnerKey(dir, path)
	if errors.Is(err, fs.ErrNotExist) {
		if err = createOwnerKey(dir, path); err == nil {
			key, err = readOwnerKey(dir, path)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("owner key %s: %w", path, err)
	}
	return key, nil
}

// EnsureOwnerKey reports whether this OS user's owner key is usable,
// creating it on first use. Without it, only the databases this process
// creates are ever reset or dropped: no marker proves a database the
// tool's, so a later run cannot sweep what this one leaves.
func EnsureOwnerKey() error {
	_, err := ownerKey()
	return err
}

func readOwnerKey(dir, path string) ([]byte, error) {
	if err := privateDir(dir); err != nil {
		return nil, err
	}
	if err := privateFile(path); err != nil {
		return nil, err
	}
	key, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(key) != ownerKeySize {
		return nil, fmt.Errorf("%d bytes, want %d", len(key), ownerKeySize)
	}
	return key, nil
}

// privateDir fails unless dir (a symlink is followed) is this user's and
// no one else may write in it: else someone else may have put the key.
func privateDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	return checkPrivate(dir, st, 0o022)
}

// privateFile fails unless path is a regular file (not a symlink), this
// user's, and no one else may read or write it.
func privateFile(path string) error {
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", path)
	}
	return checkPrivate(path, st, 0o077)
}

func checkPrivate(path string, st fs.FileInfo, deny fs.FileMode) error {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("%s: owned by uid %d, not this user (%d)", path, sys.Uid, os.Geteuid())
	}
	if st.Mode().Perm()&deny != 0 {
		return fmt.Errorf("%s: mode %v lets other users in", path, st.Mode().Perm())
	}
	return nil
}

// createOwnerKey writes a new key to a temp file and links it into place;
// if another process linked one first, that one stands.
func createOwnerKey(dir, path string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".owner.key-*") // 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	key := make([]byte, ownerKeySize)
	rand.Read(key)
	if _, err := tmp.Write(key); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}
