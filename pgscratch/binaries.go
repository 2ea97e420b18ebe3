package pgscratch

import (
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// binaries are the local server programs a throwaway cluster needs.
type binaries struct {
	initdb   string
	postgres string
	version  string // "postgres (PostgreSQL) 15.18" → "15.18"
}

// findBinaries looks on PATH, then under /usr/lib/postgresql/*/bin, newest
// major version first.
func findBinaries() (binaries, error) {
	dirs := []string{}
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(found, func(i, j int) bool { return majorOf(found[i]) > majorOf(found[j]) })
	dirs = append(dirs, found...)
	for _, d := range dirs {
		b := binaries{initdb: filepath.Join(d, "initdb"), postgres: filepath.Join(d, "postgres")}
		if isExec(b.initdb) && isExec(b.postgres) {
			out, err := exec.Command(b.postgres, "--version").Output()
			if err != nil {
				continue
			}
			b.version = versionOf(string(out))
			return b, nil
		}
	}
	return binaries{}, errors.New("no initdb/postgres binaries found")
}

// versionOf reads "15.18" out of "postgres (PostgreSQL) 15.18 (Debian ...)".
func versionOf(out string) string {
	f := strings.Fields(out)
	for i, w := range f {
		if w == "(PostgreSQL)" && i+1 < len(f) {
			return f[i+1]
		}
	}
	return "unknown"
}

func majorOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// runAs is the OS identity the server runs under: the postgres user when we
// are root (PostgreSQL refuses root), else ourselves.
type runAs struct {
	uid, gid int
	cred     *syscall.Credential // nil when not switching user
}

func serverUser() (runAs, error) {
	if os.Geteuid() != 0 {
		return runAs{uid: os.Getuid(), gid: os.Getgid()}, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return runAs{}, errors.New("running as root needs an unprivileged 'postgres' OS user for the server (PostgreSQL refuses root); create one with: useradd --system postgres")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return runAs{uid: uid, gid: gid, cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}, nil
}

// chown gives path to the server user; a no-op when not root.
func (r runAs) chown(path string) error {
	if r.cred == nil {
		return nil
	}
	return os.Chown(path, r.uid, r.gid)
}

// command builds a child process that runs as the server user, in its own
// process group, and dies with the thread that started it.
func (r runAs) command(dir, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred, Setpgid: true, Pdeathsig: syscall.SIGQUIT}
	return cmd
}
