package faults

import (
	"sync"
	"time"
)

// Forever is the time a held request is answered at: never, until the
// link heals. Watch's function receives it for a partition.
var Forever = time.Time{}

// stallWatch is where a link's gate tells who watches it that a client
// request can get no reply before a given time: a partition held it (until
// the heal), or a delay forwards it late. It lives on the link, so it
// outlasts the fault injected on it.
type stallWatch struct {
	mu sync.Mutex
	fn func(until time.Time) // nil: nobody watches
}

func (w *stallWatch) tell(until time.Time) {
	w.mu.Lock()
	fn := w.fn
	w.mu.Unlock()
	if fn != nil {
		fn(until)
	}
}

// Watch has fn told, until stop is called, each time a fault on link keeps
// a client request from the server: until is Forever for a partition
// (Blackhole, Sever: nothing comes back before the heal), or the instant a
// delay (Latency) forwards it. Only whole requests count, the ones the
// client then waits on (startup, authentication, Query, Sync): a caller
// that waits for every reply knows its call cannot succeed before until.
// fn runs on a proxy goroutine and must not call Net. One watcher per
// link; a later Watch replaces it.
func (n *Net) Watch(link string, fn func(until time.Time)) (stop func(), err error) {
	l, err := n.link(link)
	if err != nil {
		return nil, err
	}
	l.stall.mu.Lock()
	l.stall.fn = fn
	l.stall.mu.Unlock()
	return func() {
		l.stall.mu.Lock()
		l.stall.fn = nil
		l.stall.mu.Unlock()
	}, nil
}
