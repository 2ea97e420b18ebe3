package proccheck

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/outboxcheck/outboxcheck/internal/pinned"
)

// helloTimeout bounds how long a process may take to say hello.
const helloTimeout = 20 * time.Second

// maxLine is the longest line a process may write.
const maxLine = 1 << 20

// child is one running process of the subject, for one actor.
type child struct {
	role  string
	cmd   *exec.Cmd
	hello hello

	wmu   sync.Mutex
	stdin *os.File      // our end of its stdin
	lines chan []byte   // stdout, line by line; closed at EOF
	done  chan struct{} // closed once the process has exited and been reaped
	log   *tail         // the last of its stderr

	stopping atomic.Bool // a SIGTERM asked it to stop
}

// ProtocolError is a process that broke the protocol: a line that is not
// what it should be, a reply to nothing, an exit at start, a hello that
// never came. It is the subject's error, never a property violation.
type ProtocolError struct {
	Role string
	What string
	Line string // the offending line, if one
	Log  string // the last of the process's stderr
}

// SubjectOperation names the process, for the report: a broken protocol
// is the subject's error (harness.SubjectFault), never a property.
func (e *ProtocolError) SubjectOperation() string { return "the " + e.Role + " process" }

func (e *ProtocolError) Error() string {
	s := fmt.Sprintf("subject's %s process: %s", e.Role, e.What)
	if e.Line != "" {
		s += fmt.Sprintf(": %q", e.Line)
	}
	if e.Log != "" {
		s += "; its stderr ends: " + e.Log
	}
	return s
}

// spawn starts argv with role appended and env added, and waits for its
// hello.
func spawn(ctx context.Context, argv []string, dir string, env []string, role string) (*child, error) {
	// A new slice: appending to argv[1:] would write into the Command's
	// own array, shared by every process started from it, at once.
	cmd := exec.Command(argv[0], append(slices.Clone(argv[1:]), role)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	// Its own process group, so that a kill reaches what it started; and
	// killed with the harness, whatever ends the harness.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	c := &child{role: role, cmd: cmd, lines: make(chan []byte, 64), log: &tail{max: 2048}}
	cmd.Stderr = c.log
	// Pipes of our own, not exec's: exec's are closed when the process is
	// reaped, which may be before its last lines are read.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, c.stdin = inR, outW, inW
	c.done, err = pinned.Start(cmd)
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("start the subject's %s process: %w", role, err)
	}
	go c.read(outR)
	hctx, cancel := context.WithTimeout(ctx, helloTimeout)
	defer cancel()
	line, err := c.next(hctx)
	if err != nil {
		c.kill()
		var pe *ProtocolError
		switch {
		case errors.As(err, &pe):
			pe.What = "exited before its hello: " + c.cmd.ProcessState.String()
			return nil, pe
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
		return nil, c.broke(fmt.Sprintf("no hello within %v", helloTimeout), "")
	}
	if err := json.Unmarshal(line, &c.hello); err != nil || c.hello.Hello == "" {
		c.kill()
		return nil, c.broke("its first line is not a hello", string(line))
	}
	if c.hello.Hello != Version {
		c.kill()
		return nil, c.broke(fmt.Sprintf("speaks %s, not %s", c.hello.Hello, Version), string(line))
	}
	return c, nil
}

// read hands stdout's lines to c.lines until EOF.
func (c *child) read(stdout *os.File) {
	defer stdout.Close()
	r := bufio.NewReaderSize(stdout, 64<<10)
	for {
		line, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 {
			c.lines <- line
		}
		if err != nil {
			break
		}
	}
	close(c.lines)
}

func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, isPrefix, err := r.ReadLine()
		line = append(line, part...)
		if err != nil || !isPrefix {
			return line, err
		}
		if len(line) > maxLine {
			return line[:maxLine], fmt.Errorf("line longer than %d bytes", maxLine)
		}
	}
}

// next is the next line the process writes; an error if it exits first
// or ctx ends.
func (c *child) next(ctx context.Context) ([]byte, error) {
	select {
	case line, ok := <-c.lines:
		if !ok {
			<-c.done
			return nil, c.exited()
		}
		return line, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// exited is the error of a process that ended.
func (c *child) exited() error {
	return c.broke("exited: "+c.cmd.ProcessState.String(), "")
}

// send writes v as one line.
func (c *child) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.stdin.Write(append(b, '\n'))
	return err
}

// signal sends sig to the process's group.
func (c *child) signal(sig syscall.Signal) {
	_ = syscall.Kill(-c.cmd.Process.Pid, sig)
}

// kill ends the process group with SIGKILL and waits for the process.
func (c *child) kill() {
	c.signal(syscall.SIGKILL)
	c.signal(syscall.SIGCONT) // a stopped group dies only once it runs
	c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
	}
}

// alive says whether the process still runs.
func (c *child) alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

func (c *child) broke(what, line string) *ProtocolError {
	return &ProtocolError{Role: c.role, What: what, Line: line, Log: c.log.String()}
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

// String is the last few lines, on one line.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.TrimSpace(strings.Join(lines, " | "))
}

var errNotRunning = errors.New("not running")
