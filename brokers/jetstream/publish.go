package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/outboxcheck/outboxcheck/harness"
)

const msgIDHeader = jetstream.MsgIDHeader

// Publisher is one relay's connection to the broker, through the link:
// a harness.Publisher. A publish whose acknowledgement does not come
// (the link cut, blackholed or slow past the caller's deadline, the
// connection lost) is ambiguous, as on any real broker: the message may
// be in the stream. It returns harness.ErrAckLost wrapping the cause.
type Publisher struct {
	conn *nats.Conn
	js   jetstream.JetStream
	mu   sync.Mutex
	dups int // acknowledgements that said "duplicate": dropped as a retry within the window
	// timeout bounds a publish whose caller set no deadline: an ack the
	// wire lost never comes.
	timeout time.Duration
}

// NewPublisher connects a publisher named name through the link. It
// reconnects by itself when the link comes back, as a client library
// does.
func (b *Broker) NewPublisher(name string) (*Publisher, error) {
	url, err := b.URL()
	if err != nil {
		return nil, err
	}
	// No reconnect buffer: a publish made while the link is down fails
	// at once, rather than wait in this process's memory and reach the
	// stream whenever the link comes back, after its relay gave up on it
	// or died.
	conn, err := nats.Connect(url, nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond),
		nats.Timeout(b.opts.CallTimeout), nats.RetryOnFailedConnect(true), nats.ReconnectBufSize(-1),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {})) // the link's faults are the harness's: no stray lines on stderr
	if err != nil {
		return nil, fmt.Errorf("jetstream: publisher %s: %w", name, err)
	}
	js, err := jetstream.New(conn)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("jetstream: publisher %s: %w", name, err)
	}
	return &Publisher{conn: conn, js: js, timeout: b.opts.CallTimeout}, nil
}

// Publish sends m with its id as Nats-Msg-Id and waits for the stream's
// acknowledgement until ctx ends (or, when ctx has no deadline, for the
// broker's CallTimeout). A nil error is the broker's ack, a
// duplicate's included (the stream already had it).
func (p *Publisher) Publish(ctx context.Context, m harness.Message) error {
	data, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	msg := &nats.Msg{Subject: Subject, Data: data, Header: nats.Header{}}
	ack, err := p.js.PublishMsg(ctx, msg, jetstream.WithMsgID(m.ID), jetstream.WithRetryAttempts(0))
	switch {
	case err == nil:
		if ack.Duplicate {
			p.mu.Lock()
			p.dups++
			p.mu.Unlock()
		}
		return nil
	case errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, nats.ErrInvalidConnection):
		return fmt.Errorf("jetstream: the publisher is closed: %w", err)
	}
	return fmt.Errorf("%w: %w", harness.ErrAckLost, err)
}

// DuplicateAcks is how many of its publishes the broker acknowledged
// as duplicates within its window.
func (p *Publisher) DuplicateAcks() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dups
}

// Close ends the publisher's connection.
func (p *Publisher) Close() { p.conn.Close() }
