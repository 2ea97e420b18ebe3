// Package soak is the baseline outboxcheck is measured against: what teams
// write today instead of a model-based harness. Producer, dispatcher and
// consumer loops run concurrently on the subject while a fixed rotation
// breaks and heals the same faults the harness uses (toxiproxy per link,
// broker refusals and lost acks, dispatcher and consumer crashes). Only
// the end state is checked, after healing and draining: lost payments,
// duplicated effects, phantom effects. No model, no shrinking.
package soak

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/model"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// Config is one soak.
type Config struct {
	DatabaseURL string        // a database the tool created
	Budget      time.Duration // wall time; rounds run until it is spent or one fails
	Round       time.Duration // one round's load before it drains and checks; default 3 s
	Faults      bool          // the fault rotation; without it, only crashes and broker faults
}

// Result is what the soak found.
type Result struct {
	Killed  bool
	Problem string        // the first end-state problem found
	ToFail  time.Duration // wall time until the round that found it ended
	Rounds  int
	Paid    int // payments committed
}

// Run soaks the subject built by newSubject.
func Run(ctx context.Context, newSubject stepcheck.NewSubject, c Config) (Result, error) {
	if c.Round == 0 {
		c.Round = 3 * time.Second
	}
	base, err := url.Parse(c.DatabaseURL)
	if err != nil {
		return Result{}, fmt.Errorf("soak: database URL: %w", err)
	}
	var net *faults.Net
	if c.Faults {
		net = faults.NewNet(base.Host)
		defer net.Close()
	}
	var ids atomic.Uint64
	var cur currentBroker
	var linkErr error
	env := stepcheck.Env{
		ConnString: func(a harness.Actor) string {
			u := *base
			if net != nil && a.Role != harness.Operator {
				addr, err := net.Link(a.String())
				linkErr = errors.Join(linkErr, err)
				u.Host = addr
			}
			q := u.Query()
			q.Set("application_name", "outboxcheck-soak-"+a.String())
			u.RawQuery = q.Encode()
			return u.String()
		},
		NewID:       func() string { return fmt.Sprintf("00000000-0000-4000-8000-%012x", ids.Add(1)) },
		Semantics:   policy(),
		Dispatchers: 2,
		Consumers:   2,
		Broker:      &cur,
	}
	bctx, cancel := context.WithTimeout(ctx, time.Minute)
	subj, err := newSubject(bctx, env)
	cancel()
	if err = errors.Join(err, linkErr); err != nil {
		if subj != nil {
			subj.Close()
		}
		return Result{}, fmt.Errorf("soak: build subject: %w", err)
	}
	defer subj.Close()

	start := time.Now()
	var res Result
	for time.Since(start) < c.Budget && ctx.Err() == nil {
		res.Rounds++
		r := newRound(subj, net, env)
		cur.set(&r.bro)
		if err := r.run(ctx, c.Round); err != nil {
			return res, err
		}
		res.Paid += len(r.paid)
		if p := r.problem; p != "" {
			res.Killed, res.Problem, res.ToFail = true, p, time.Since(start)
			return res, nil
		}
	}
	return res, nil
}

// policy is the harness's default: the seed's lease and backoff, DEAD at 3.
func policy() model.Semantics {
	p := model.SeedSemantics()
	p.MaxAttempts = 3
	return p
}

// clock is the soak's time: it runs 250 times faster than the wall, so
// leases (1 min) expire and backoffs come due within a round.
type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// broker is an at-least-once queue: a message goes to one consumer at a
// time and back on the queue until a consumer acknowledges it.
type broker struct {
	mu        sync.Mutex
	queue     []harness.Message
	published int
}

var (
	errRefused = errors.New("broker refused the publish")
	errAckLost = errors.New("broker acknowledgement lost")
)

func (b *broker) Publish(_ context.Context, m harness.Message) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.published++
	switch {
	case b.published%7 == 0:
		return errRefused
	case b.published%11 == 0:
		b.queue = append(b.queue, m)
		return errAckLost
	}
	b.queue = append(b.queue, m)
	return nil
}

func (b *broker) take() (harness.Message, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) == 0 {
		return harness.Message{}, false
	}
	m := b.queue[0]
	b.queue = b.queue[1:]
	return m, true
}

func (b *broker) requeue(m harness.Message) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queue = append(b.queue, m)
}

func (b *broker) empty() bool { return b.len() == 0 }
func (b *broker) len() int    { b.mu.Lock(); defer b.mu.Unlock(); return len(b.queue) }

// currentBroker is Env.Broker: it forwards to the running round's broker.
type currentBroker struct {
	mu sync.Mutex
	b  *broker
}

func (c *currentBroker) set(b *broker) { c.mu.Lock(); c.b = b; c.mu.Unlock() }

func (c *currentBroker) Publish(ctx context.Context, m harness.Message) error {
	c.mu.Lock()
	b := c.b
	c.mu.Unlock()
	return b.Publish(ctx, m)
}
