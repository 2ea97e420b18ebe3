// Package jetstream is a real broker for subjects to publish to: an
// embedded NATS server with JetStream (in process, on loopback, nothing
// downloaded), reached through its own toxiproxy link so that the
// harness can cut, blackhole or slow the wire between a relay and the
// broker, and read back, from the stream itself, what the broker holds.
//
// A publish carries the event's id as Nats-Msg-Id: JetStream drops a
// second message with the same id that comes within the stream's
// duplicate window, and only within it. A relay that leans on that for
// exactly-once gets it for retries that come within the window; a retry
// after a longer outage is stored again (Broker.Duplicates).
package jetstream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/outboxcheck/outboxcheck/faults"
)

// Stream and Subject are where events go.
const (
	Stream  = "OUTBOX"
	Subject = "outbox.events"
)

// Link is the name of the broker's link in Broker.Net.
const Link = "broker"

// MinDedupeWindow is the shortest duplicate window JetStream takes.
const MinDedupeWindow = 100 * time.Millisecond

// ServerVersion is the embedded nats-server's version, for reports.
const ServerVersion = server.VERSION

// Options configure a broker.
type Options struct {
	// DedupeWindow is the stream's duplicate window (Nats-Msg-Id); 2 s
	// unless set: short real time, as the loop contract's leases are.
	DedupeWindow time.Duration
	// CallTimeout bounds each of the harness's own calls (stream reads,
	// setup); 5 s unless set.
	CallTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.DedupeWindow <= 0 {
		o.DedupeWindow = 2 * time.Second
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 5 * time.Second
	}
	return o
}

// Broker is one embedded JetStream server, its stream, and the link to
// it. Close ends all of it and removes its store.
type Broker struct {
	opts   Options
	srv    *server.Server
	dir    string
	Net    *faults.Net // holds Link: the wire between publishers and the server
	admin  *nats.Conn  // the harness's own connection, straight to the server
	js     jetstream.JetStream
	stream jetstream.Stream
}

// Start starts a broker: a JetStream server on a free loopback port,
// storing in a temporary directory of its own, a stream of Subject with
// the dedupe window, and the link to it.
func Start(ctx context.Context, opts Options) (b *Broker, err error) {
	opts = opts.withDefaults()
	dir, err := os.MkdirTemp("", "outboxcheck-jetstream-")
	if err != nil {
		return nil, fmt.Errorf("jetstream: store directory: %w", err)
	}
	if opts.DedupeWindow < MinDedupeWindow {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("jetstream: a dedupe window of %v: JetStream takes %v at least", opts.DedupeWindow, MinDedupeWindow)
	}
	b = &Broker{opts: opts, dir: dir}
	defer func() {
		if err != nil {
			b.Close()
			b = nil
		}
	}()
	b.srv, err = server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
		StoreDir: dir, NoLog: true, NoSigs: true, ServerName: "outboxcheck"})
	if err != nil {
		return b, fmt.Errorf("jetstream: server: %w", err)
	}
	go b.srv.Start()
	if !b.srv.ReadyForConnections(opts.CallTimeout) {
		return b, errors.New("jetstream: the embedded server did not start within " + opts.CallTimeout.String())
	}
	if b.admin, err = nats.Connect(b.srv.ClientURL(), nats.Name("outboxcheck-admin"), nats.NoReconnect()); err != nil {
		return b, fmt.Errorf("jetstream: connect: %w", err)
	}
	if b.js, err = jetstream.New(b.admin); err != nil {
		return b, fmt.Errorf("jetstream: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, opts.CallTimeout)
	defer cancel()
	if err = b.createStream(cctx); err != nil {
		return b, err
	}
	b.Net = faults.NewNet(b.srv.Addr().String())
	if _, err = b.Net.Link(Link); err != nil {
		return b, err
	}
	return b, nil
}

func (b *Broker) createStream(ctx context.Context) (err error) {
	b.stream, err = b.js.CreateStream(ctx, jetstream.StreamConfig{Name: Stream, Subjects: []string{Subject},
		Storage: jetstream.MemoryStorage, Duplicates: b.opts.DedupeWindow})
	if err != nil {
		return fmt.Errorf("jetstream: stream: %w", err)
	}
	return nil
}

// StoreDir is the server's store, removed at Close.
func (b *Broker) StoreDir() string { return b.dir }

// ServerAddr is the server's own address (the link's upstream).
func (b *Broker) ServerAddr() string { return b.srv.Addr().String() }

// DedupeWindow is the stream's duplicate window.
func (b *Broker) DedupeWindow() time.Duration { return b.opts.DedupeWindow }

// URL is where a publisher connects: through the link.
func (b *Broker) URL() (string, error) {
	addr, err := b.Net.Link(Link)
	if err != nil {
		return "", err
	}
	return "nats://" + addr, nil
}

// Close stops the link, the server and removes its store; idempotent.
func (b *Broker) Close() {
	if b.admin != nil {
		b.admin.Close()
		b.admin = nil
	}
	if b.Net != nil {
		b.Net.Close()
		b.Net = nil
	}
	if b.srv != nil {
		b.srv.Shutdown()
		b.srv.WaitForShutdown()
		b.srv = nil
	}
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
		b.dir = ""
	}
}
