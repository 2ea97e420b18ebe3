package pgscratch

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// templateDir returns a prepared data directory for this server version,
// running initdb once per machine (per cache dir). Processes racing to make
// it each build their own and the first rename wins.
func templateDir(bin binaries, as runAs) (string, error) {
	base, err := cacheDir()
	if err != nil {
		base = filepath.Join(os.TempDir(), "outboxcheck")
	}
	final := filepath.Join(base, "pgdata-template-"+bin.version)
	if st, err := os.Stat(filepath.Join(final, "PG_VERSION")); err == nil && !st.IsDir() {
		return final, nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("template cache: %w", err)
	}
	// initdb runs as the server user, which may not enter the cache dir (for
	// root it is under /root): build in a private temp dir, then copy in.
	work, err := os.MkdirTemp("", "outboxcheck-initdb-")
	if err != nil {
		return "", fmt.Errorf("template: %w", err)
	}
	defer os.RemoveAll(work)
	if err := os.Chmod(work, 0o711); err != nil {
		return "", err
	}
	data := filepath.Join(work, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		return "", err
	}
	if err := as.chown(data); err != nil {
		return "", err
	}
	cmd := as.command(work, bin.initdb, "-D", data, "-U", "postgres",
		"--auth-local=trust", "--auth-host=scram-sha-256",
		"--encoding=UTF8", "--locale=C", "--no-instructions", "--no-sync")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("initdb: %v: %s", err, lastLines(string(out), 5))
	}
	staged, err := os.MkdirTemp(base, "staged-")
	if err != nil {
		return "", fmt.Errorf("template cache: %w", err)
	}
	defer os.RemoveAll(staged)
	if err := copyTree(data, filepath.Join(staged, "data"), as); err != nil {
		return "", fmt.Errorf("template cache: %w", err)
	}
	if err := os.Rename(filepath.Join(staged, "data"), final); err != nil {
		if _, statErr := os.Stat(filepath.Join(final, "PG_VERSION")); statErr == nil {
			return final, nil // another process won the race
		}
		return "", fmt.Errorf("template cache: %w", err)
	}
	return final, nil
}

// copyTree copies a data directory, giving every file to the server user.
func copyTree(src, dst string, as runAs) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			if err := os.MkdirAll(target, info.Mode().Perm()); err != nil {
				return err
			}
			return as.chown(target)
		}
		if err := copyFile(p, target, info.Mode().Perm()); err != nil {
			return err
		}
		return as.chown(target)
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
