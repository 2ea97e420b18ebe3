// Package pinned starts child processes that die with the harness.
package pinned

import (
	"os/exec"
	"runtime"
)

// Start starts cmd from a locked OS thread that lives until the child has
// exited: a Pdeathsig in cmd.SysProcAttr fires when the starting thread
// exits, not the process (FIELD-NOTES), so the thread must outlive nothing
// but the child. done is closed once the child has been reaped
// (cmd.ProcessState is then set).
func Start(cmd *exec.Cmd) (done chan struct{}, err error) {
	errc := make(chan error, 1)
	done = make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := cmd.Start(); err != nil {
			errc <- err
			return
		}
		errc <- nil
		_ = cmd.Wait()
		close(done)
	}()
	return done, <-errc
}
