package faults

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Net is an embedded toxiproxy server with one proxy per link (an actor's
// path to PostgreSQL). Safe for concurrent use.
type Net struct {
	upstream string
	srv      *toxiproxy.ApiServer

	mu    sync.Mutex
	links map[string]*toxiproxy.Proxy
	// addrs holds each link's address as read once, when its proxy first
	// started: toxiproxy rewrites Proxy.Listen from its own goroutine on
	// every Start (Cut), unlocked, so reading it later would race.
	addrs    map[string]string
	active   map[string]*injection // link → the fault on it now
	coverage Coverage
}

type injection struct {
	id    string
	fault Fault
	gate  *gate
}

var gateSeq atomic.Uint64

// NewNet starts an embedded toxiproxy server in front of upstream
// ("host:port"). It listens on nothing until Link is called.
func NewNet(upstream string) *Net {
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	return &Net{upstream: upstream, srv: srv, links: map[string]*toxiproxy.Proxy{}, addrs: map[string]string{},
		active: map[string]*injection{}, coverage: Coverage{}}
}

// Link returns the loopback address of link's proxy, creating it.
func (n *Net) Link(name string) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if addr, ok := n.addrs[name]; ok {
		return addr, nil
	}
	p := toxiproxy.NewProxy(n.srv, name, "127.0.0.1:0", n.upstream)
	if err := n.srv.Collection.Add(p, true); err != nil {
		return "", fmt.Errorf("faults: proxy %s: %w", name, err)
	}
	n.links[name] = p
	n.addrs[name] = p.Listen // written before Add returned
	return p.Listen, nil
}

// Inject puts fault f on link, replacing any fault already there.
func (n *Net) Inject(link string, f Fault) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	p, ok := n.links[link]
	if !ok {
		return fmt.Errorf("faults: no link %q", link)
	}
	n.healLocked(p, link)
	in := &injection{id: fmt.Sprintf("g%d", gateSeq.Add(1)), fault: f, gate: &gate{fault: f}}
	gates.Store(in.id, in.gate)
	for _, up := range []bool{true, false} {
		dir := map[bool]string{true: "upstream", false: "downstream"}[up]
		body := fmt.Sprintf(`{"name":%q,"type":%q,"stream":%q,"toxicity":1.0,"attributes":{"id":%q,"up":%v}}`,
			in.id+"_"+dir, gateType, dir, in.id, up)
		if _, err := p.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
			return fmt.Errorf("faults: inject %s on %s: %w", f.Kind, link, err)
		}
	}
	n.active[link] = in
	return nil
}

// Heal removes the fault on link, if any.
func (n *Net) Heal(link string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if p, ok := n.links[link]; ok {
		n.healLocked(p, link)
	}
}

func (n *Net) healLocked(p *toxiproxy.Proxy, link string) {
	in, ok := n.active[link]
	if !ok {
		return
	}
	p.Toxics.ResetToxics(context.Background())
	armed, affected := in.gate.counts()
	n.coverage.add(in.fault.Kind, armed, affected)
	gates.Delete(in.id)
	delete(n.active, link)
}

// Faulty reports whether link has a fault on it now.
func (n *Net) Faulty(link string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, ok := n.active[link]
	return ok
}

// Cut drops every connection through link at once, in both directions,
// and opens it again for new ones: whatever was in flight is lost. The
// fault on the link, if any, stays.
func (n *Net) Cut(link string) error {
	n.mu.Lock()
	p, ok := n.links[link]
	n.mu.Unlock()
	if !ok {
		return fmt.Errorf("faults: no link %q", link)
	}
	p.Stop()
	var err error
	for try := 0; try < 50; try++ {
		if err = p.Start(); err == nil || errors.Is(err, toxiproxy.ErrProxyAlreadyStarted) {
			return nil
		}
		time.Sleep(10 * time.Millisecond) // the port is briefly in TIME_WAIT use
	}
	return fmt.Errorf("faults: reopen %s: %w", link, err)
}

// Coverage returns what every fault healed so far did, plus the ones still
// on.
func (n *Net) Coverage() Coverage {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := n.coverage.clone()
	for _, in := range n.active {
		armed, affected := in.gate.counts()
		c.add(in.fault.Kind, armed, affected)
	}
	return c
}

// Close heals everything and stops every proxy listening.
func (n *Net) Close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	names := make([]string, 0, len(n.links))
	for name := range n.links {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := n.links[name]
		n.healLocked(p, name)
		p.Stop()
		n.srv.Collection.Remove(name)
	}
	n.links = map[string]*toxiproxy.Proxy{}
	n.addrs = map[string]string{}
}
