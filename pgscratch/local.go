package pgscratch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/outboxcheck/outboxcheck/internal/pinned"
)

const (
	readyTimeout = 30 * time.Second
	stopTimeout  = 10 * time.Second
	bindRetries  = 5
	// pidFileTries bounds the 1 ms reads of postmaster.pid while a server
	// starts (or recovers); then connection attempts alone decide.
	pidFileTries = 2000
)

// localServer is a throwaway cluster the harness owns: its process, data
// directory, port and password.
type localServer struct {
	bin      binaries
	as       runAs
	root     string // temp dir holding data/, sock/ and postgres.log
	port     int
	password string

	extra []string // settings asked for: -c name=value...

	proc *exec.Cmd
	done chan struct{} // closed when proc has exited
}

func startLocal(ctx context.Context, bin binaries, extra []string) (*Server, error) {
	as, err := serverUser()
	if err != nil {
		return nil, err
	}
	tmpl, err := templateDir(bin, as)
	if err != nil {
		return nil, err
	}
	s := &localServer{bin: bin, as: as, password: randomHex(16), extra: extra}
	if err := s.prepare(tmpl); err != nil {
		s.removeFiles()
		return nil, err
	}
	if err := s.startFresh(ctx); err != nil {
		s.stop()
		s.removeFiles()
		return nil, err
	}
	return &Server{
		Source:   SourceLocal,
		adminURL: s.url("postgres"),
		local:    s,
		closeFn: func() error {
			err := s.stop()
			return errors.Join(err, s.removeFiles())
		},
	}, nil
}

func (s *localServer) dataDir() string { return filepath.Join(s.root, "data") }
func (s *localServer) sockDir() string { return filepath.Join(s.root, "sock") }
func (s *localServer) logPath() string { return filepath.Join(s.root, "postgres.log") }

// prepare lays out the temp dir: a copy of the template data dir and a
// private socket dir, both owned by the server user.
func (s *localServer) prepare(tmpl string) error {
	sweepOrphans()
	root, err := os.MkdirTemp("", "outboxcheck-pg-")
	if err != nil {
		return fmt.Errorf("postgres temp dir: %w", err)
	}
	s.root = root
	if err := markOwner(root); err != nil {
		return err
	}
	if err := os.Chmod(root, 0o711); err != nil {
		return err
	}
	if err := copyTree(tmpl, s.dataDir(), s.as); err != nil {
		return fmt.Errorf("copy template data dir: %w", err)
	}
	if err := os.Chmod(s.dataDir(), 0o700); err != nil {
		return err
	}
	if err := s.writeHBA(); err != nil {
		return fmt.Errorf("pg_hba.conf: %w", err)
	}
	if err := os.Mkdir(s.sockDir(), 0o700); err != nil {
		return err
	}
	return s.as.chown(s.sockDir())
}

// startFresh picks a free loopback port, starts the server, and sets the
// per-run password over the private socket. A lost bind race is retried.
func (s *localServer) startFresh(ctx context.Context) error {
	var err error
	for try := 0; try < bindRetries; try++ {
		if s.port, err = freePort(); err != nil {
			return err
		}
		if err = s.launch(ctx); err == nil {
			return s.setPassword(ctx)
		}
		if !strings.Contains(err.Error(), "could not bind") && !strings.Contains(err.Error(), "already in use") {
			return err
		}
	}
	return err
}

// launch starts the postmaster and waits until it accepts connections.
func (s *localServer) launch(ctx context.Context) error {
	logf, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	args := []string{"-D", s.dataDir(),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "port=" + strconv.Itoa(s.port),
		"-c", "unix_socket_directories=" + s.sockDir(),
		"-c", "logging_collector=off",
	}
	args = append(append(args, fastSettings()...), s.extra...)
	cmd := s.as.command(s.root, s.bin.postgres, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	done, err := pinned.Start(cmd)
	if err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	s.proc, s.done = cmd, done
	return s.waitReady(ctx)
}

func (s *localServer) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(readyTimeout)
	tries := 0
	for {
		select {
		case <-s.done:
			log := lastLines(readFile(s.logPath()), 4)
			if len(s.extra) > 0 && refusedSetting(log) {
				return fmt.Errorf("%w: postgres refused one asked for: %s", ErrSettings, log)
			}
			return fmt.Errorf("postgres exited at start: %s", log)
		default:
		}
		// Until the server says it is ready, a cheap read of its pid file
		// every millisecond instead of a connection attempt (each forks a
		// backend); connection attempts alone once that file cannot be read.
		// "ready" there is what pg_ctl waits for: the server accepts
		// connections, and none need be made to know it (one costs 9 ms
		// of a 50 ms restart after a database crash).
		ready, readable := pidFileReady(s.dataDir(), s.proc.Process.Pid)
		if ready {
			return nil
		}
		if readable && tries < pidFileTries && ctx.Err() == nil {
			tries++
			time.Sleep(time.Millisecond)
			continue
		}
		conn, err := connect(ctx, s.socketURL())
		if err == nil {
			closeConn(conn)
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("postgres start: %w", ctx.Err())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not ready after %v: %v: %s", readyTimeout, err, lastLines(readFile(s.logPath()), 4))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (s *localServer) setPassword(ctx context.Context) error {
	conn, err := connect(ctx, s.socketURL())
	if err != nil {
		return err
	}
	defer closeConn(conn)
	// md5, for hba: the role's password must be stored so.
	if _, err = conn.Exec(ctx, "SET password_encryption = 'md5'"); err != nil {
		return err
	}
	_, err = conn.Exec(ctx, "ALTER ROLE postgres PASSWORD '"+s.password+"'")
	return err
}

// socketURL reaches the server over its private Unix socket (trust auth;
// only root and the server user can enter the socket dir).
func (s *localServer) socketURL() string {
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=postgres sslmode=disable", s.sockDir(), s.port)
}

// url is the loopback TCP URL with the per-run password.
func (s *localServer) url(db string) string {
	return fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/%s?sslmode=disable", s.password, s.port, db)
}

// crash kills the postmaster and every backend at once (SIGKILL to the
// process group), then starts the server again on the same port and data
// directory and waits until crash recovery is done.
func (s *localServer) crash(ctx context.Context) error {
	if s.proc == nil || s.proc.Process == nil {
		return errors.New("postgres is not running")
	}
	shm := shmID(s.dataDir())
	_ = syscall.Kill(-s.proc.Process.Pid, syscall.SIGKILL)
	<-s.done
	waitShmDetached(shm) // else the new server refuses to start
	var err error
	for try := 0; try < bindRetries; try++ {
		if err = s.launch(ctx); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond) // the old sockets may linger an instant
	}
	return fmt.Errorf("restart after crash: %w", err)
}

// stop asks for a fast shutdown, then kills the process group if it lingers.
func (s *localServer) stop() error {
	if s.proc == nil || s.proc.Process == nil {
		return nil
	}
	_ = s.proc.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
		return nil
	case <-time.After(stopTimeout):
		_ = syscall.Kill(-s.proc.Process.Pid, syscall.SIGKILL)
		<-s.done
		return fmt.Errorf("postgres did not stop within %v; killed", stopTimeout)
	}
}

func (s *localServer) removeFiles() error {
	if s.root == "" {
		return nil
	}
	return os.RemoveAll(s.root)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}
