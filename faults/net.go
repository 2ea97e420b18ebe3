package faults

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Net is an embedded toxiproxy server with one proxy per link (an actor's
// path to PostgreSQL). Safe for concurrent use.
type Net struct {
	upstream string
	srv      *toxiproxy.ApiServer

	mu       sync.Mutex
	links    map[string]*proxyLink
	active   map[string]*injection // link → the fault on it now
	coverage Coverage
	perLink  map[string]Coverage // link → what its faults did
}

// proxyLink is one proxy and what Net knows of it.
type proxyLink struct {
	proxy *toxiproxy.Proxy
	// addr is the proxy's address as read once, when it first started:
	// toxiproxy rewrites Proxy.Listen from its own goroutine on every
	// Start (Cut, Up), unlocked, so reading it later would race.
	addr string

	// power serialises stopping and starting the proxy (Cut, Down, Up,
	// Close), so that a Cut never starts a link that Down stopped.
	power  sync.Mutex
	down   atomic.Bool // Down, and no Up since; written holding power
	closed bool        // Close removed it; guarded by power
	stall  stallWatch  // who is told of a stalled request (Watch)
	cut    cutSignal   // fired when its connections are dropped (Cut, Down)
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
	return &Net{upstream: upstream, srv: srv, links: map[string]*proxyLink{}, active: map[string]*injection{}, coverage: Coverage{},
		perLink: map[string]Coverage{}}
}

// Link returns the loopback address of link's proxy, creating it.
func (n *Net) Link(name string) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if l, ok := n.links[name]; ok {
		return l.addr, nil
	}
	p := toxiproxy.NewProxy(n.srv, name, "127.0.0.1:0", n.upstream)
	if err := n.srv.Collection.Add(p, true); err != nil {
		return "", fmt.Errorf("faults: proxy %s: %w", name, err)
	}
	n.links[name] = &proxyLink{proxy: p, addr: p.Listen} // written before Add returned
	return p.Listen, nil
}

// Inject puts fault f on link, replacing any fault already there (which
// ends as at Heal).
func (n *Net) Inject(link string, f Fault) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	l, ok := n.links[link]
	if !ok {
		return fmt.Errorf("faults: no link %q", link)
	}
	p := l.proxy
	n.healLocked(p, link)
	in := &injection{id: fmt.Sprintf("g%d", gateSeq.Add(1)), fault: f, gate: &gate{fault: f, stall: &l.stall, cut: &l.cut}}
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

// Heal removes the fault on link, if any, and returns once its end has
// played out on every live connection: a Blackhole has delivered what it
// held, a Sever has closed the connections it held anything of (see the
// kinds). A link that is down stays down.
func (n *Net) Heal(link string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if l, ok := n.links[link]; ok {
		n.healLocked(l.proxy, link)
	}
}

func (n *Net) healLocked(p *toxiproxy.Proxy, link string) {
	in, ok := n.active[link]
	if !ok {
		return
	}
	p.Toxics.ResetToxics(context.Background()) // before forgetting the gate: Cleanup reads it
	armed, affected := in.gate.counts()
	n.coverage.add(in.fault.Kind, armed, affected)
	if n.perLink[link] == nil {
		n.perLink[link] = Coverage{}
	}
	n.perLink[link].add(in.fault.Kind, armed, affected)
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
// fault on the link, if any, stays. A link that is down stays down.
func (n *Net) Cut(link string) error {
	l, err := n.link(link)
	if err != nil {
		return err
	}
	l.power.Lock()
	defer l.power.Unlock()
	if l.closed || l.down.Load() {
		return nil
	}
	l.proxy.Stop()
	l.cut.fire()
	if err := start(l.proxy); err != nil {
		return fmt.Errorf("faults: reopen %s: %w", link, err)
	}
	return nil
}

// link returns the named link. Callers take its power lock only after
// this returns: nothing holding power waits for mu.
func (n *Net) link(name string) (*proxyLink, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	l, ok := n.links[name]
	if !ok {
		return nil, fmt.Errorf("faults: no link %q", name)
	}
	return l, nil
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

// LinkCoverage is Coverage per link: what the faults put on each link
// did, healed or still on.
func (n *Net) LinkCoverage() map[string]Coverage {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := map[string]Coverage{}
	for l, c := range n.perLink {
		out[l] = c.clone()
	}
	for l, in := range n.active {
		if out[l] == nil {
			out[l] = Coverage{}
		}
		armed, affected := in.gate.counts()
		out[l].add(in.fault.Kind, armed, affected)
	}
	return out
}

// Close heals everything and stops every proxy listening, whether it is
// up or down. The links are forgotten.
func (n *Net) Close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	names := make([]string, 0, len(n.links))
	for name := range n.links {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		l := n.links[name]
		n.healLocked(l.proxy, name)
		l.power.Lock() // lock order: mu, then power (power holders never take mu)
		l.closed = true
		l.proxy.Stop()
		_ = n.srv.Collection.Remove(name)
		l.power.Unlock()
	}
	n.links = map[string]*proxyLink{}
}
