package faults

import (
	"errors"
	"fmt"
	"time"

	"github.com/Shopify/toxiproxy/v2"
)

// Down takes link down as a killed actor's link: every connection through
// it is dropped at once (as by Cut) and new ones are refused
// (ECONNREFUSED) until Up. Its address stays the same. The fault on the
// link, if any, stays; Heal and Cut leave the link down. Idempotent.
func (n *Net) Down(link string) error {
	l, err := n.link(link)
	if err != nil {
		return err
	}
	l.power.Lock()
	defer l.power.Unlock()
	if !l.closed {
		l.proxy.Stop()
	}
	l.cut.fire()
	l.down.Store(true)
	return nil
}

// Up brings link up again after Down, on the same address; it is a no-op
// on a link that is up. It fails if the address stays taken (by another
// socket) beyond a short retry.
func (n *Net) Up(link string) error {
	l, err := n.link(link)
	if err != nil {
		return err
	}
	l.power.Lock()
	defer l.power.Unlock()
	if l.closed || !l.down.Load() {
		return nil
	}
	if err := start(l.proxy); err != nil {
		return fmt.Errorf("faults: bring %s up: %w", link, err)
	}
	l.down.Store(false)
	return nil
}

// IsDown reports whether link is down: Down was called and Up has not
// succeeded since. False for a link Net does not know.
func (n *Net) IsDown(link string) bool {
	l, err := n.link(link)
	return err == nil && l.down.Load()
}

// start starts p listening on its address again, retrying while the port
// is briefly in use; a proxy already started is fine.
func start(p *toxiproxy.Proxy) error {
	var err error
	for try := 0; try < 50; try++ {
		if err = p.Start(); err == nil || errors.Is(err, toxiproxy.ErrProxyAlreadyStarted) {
			return nil
		}
		time.Sleep(10 * time.Millisecond) // the port is briefly in TIME_WAIT use
	}
	return err
}
