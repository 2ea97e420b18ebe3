package gate

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// interrupts turns SIGINT and SIGTERM into a clean stop. For a graceful
// command (run) the first closes C: the run stops at its next step, keeps
// what it found and writes its report. The second, or the first for any
// other command, ends the process at once, after force (which closes the
// cluster, so no server or temp dir survives).
type interrupts struct {
	C        chan struct{}
	graceful bool

	sigc   chan os.Signal
	stderr io.Writer
	mu     sync.Mutex
	sig    os.Signal
	force  func()
	done   chan struct{}
	exited chan struct{} // closed when watch returns
}

func watchInterrupts(stderr io.Writer, graceful bool) *interrupts {
	i := &interrupts{C: make(chan struct{}), graceful: graceful, sigc: make(chan os.Signal, 2), stderr: stderr, done: make(chan struct{}), exited: make(chan struct{})}
	signal.Notify(i.sigc, syscall.SIGINT, syscall.SIGTERM)
	go i.watch()
	return i
}

func (i *interrupts) watch() {
	defer close(i.exited)
	for {
		select {
		case <-i.done:
			return
		case sig := <-i.sigc:
			i.mu.Lock()
			first := i.sig == nil
			if first {
				i.sig = sig
			}
			force := i.force
			i.mu.Unlock()
			if first {
				close(i.C)
			}
			switch {
			case first && force == nil:
				continue // still starting the server: openSession stops and cleans up
			case first && i.graceful:
				fmt.Fprintf(i.stderr, "outboxcheck: %v: stopping after the current step (again to stop at once)\n", sig)
				continue
			}
			fmt.Fprintln(i.stderr, "outboxcheck: interrupted")
			if force != nil {
				force()
			}
			os.Exit(exitSignal(sig))
		}
	}
}

// onForce sets what the second signal runs before the process exits.
func (i *interrupts) onForce(f func()) { i.mu.Lock(); i.force = f; i.mu.Unlock() }

// signal is the first signal received, or nil.
func (i *interrupts) signal() os.Signal { i.mu.Lock(); defer i.mu.Unlock(); return i.sig }

// stop stops watching, and returns once nothing more will be written.
func (i *interrupts) stop() {
	signal.Stop(i.sigc)
	close(i.done)
	<-i.exited
}

// err is the error of a run the signal stopped before it found anything:
// the line "interrupted", and the shell's code for the signal.
func (i *interrupts) err() error {
	return &Error{Code: exitSignal(i.signal()), Err: fmt.Errorf("interrupted")}
}

// exitSignal is 128 + the signal's number, as a shell reports it: 130 for
// SIGINT, 143 for SIGTERM.
func exitSignal(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 128 + int(syscall.SIGINT)
}
