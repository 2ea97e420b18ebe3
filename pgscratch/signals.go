package pgscratch

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// live clusters are closed when the process gets SIGINT or SIGTERM, then the
// signal is raised again so the process ends as it would have.
var live struct {
	sync.Mutex
	set  map[*Server]struct{}
	sigc chan os.Signal
}

func register(c *Server) {
	live.Lock()
	defer live.Unlock()
	if live.set == nil {
		live.set = map[*Server]struct{}{}
	}
	live.set[c] = struct{}{}
	if live.sigc == nil {
		live.sigc = make(chan os.Signal, 1)
		signal.Notify(live.sigc, syscall.SIGINT, syscall.SIGTERM)
		go onSignal(live.sigc)
	}
}

func unregister(c *Server) {
	live.Lock()
	defer live.Unlock()
	delete(live.set, c)
	if len(live.set) == 0 && live.sigc != nil {
		signal.Stop(live.sigc)
		close(live.sigc)
		live.sigc = nil
	}
}

func onSignal(sigc chan os.Signal) {
	sig, ok := <-sigc
	if !ok {
		return
	}
	live.Lock()
	var all []*Server
	for c := range live.set {
		all = append(all, c)
	}
	live.Unlock()
	for _, c := range all {
		_ = c.Close()
	}
	signal.Reset(sig)
	_ = syscall.Kill(os.Getpid(), sig.(syscall.Signal))
}
