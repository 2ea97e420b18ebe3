package loopcheck

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/outboxcheck/outboxcheck/properties"
)

var (
	errBrokerDown = errors.New("broker refused the publish (down)")
	errDead       = errors.New("broker refused the publish: this relay incarnation was killed")
)

// Attempt is one publish the broker saw: which event, when (since the
// schedule started), from which relay incarnation, and what came of it.
type Attempt struct {
	EventID   string
	PaymentID string
	At        time.Duration
	Relay     string // "dispatcher-0#2": dispatcher 0, its second incarnation
	Outcome   string // accepted, down, dead
}

// broker records every publish attempt and every message it accepts. It
// is down until downUntil, a point in real time, so an outage lasts what
// the schedule drew however long the steps around it take.
type broker struct {
	mu        sync.Mutex
	start     time.Time
	downUntil time.Time
	log       []properties.Message
	attempts  []Attempt
}

func newBroker(start time.Time) *broker { return &broker{start: start} }

// downFor takes the broker down for d from now (extending an outage under
// way, never shortening it) and returns how much downtime that added.
func (b *broker) downFor(d time.Duration) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	from := now
	if b.downUntil.After(now) {
		from = b.downUntil
	}
	until := now.Add(d)
	if !until.After(from) {
		return 0
	}
	b.downUntil = until
	return until.Sub(from)
}

// up ends any outage now.
func (b *broker) up() { b.mu.Lock(); b.downUntil = time.Time{}; b.mu.Unlock() }

// publish is incarnation relay's publish of m; dead says it was killed.
func (b *broker) publish(m properties.Message, relay string, dead bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	a := Attempt{EventID: m.ID, PaymentID: m.AggregateID, At: time.Since(b.start), Relay: relay, Outcome: "accepted"}
	var err error
	switch {
	case dead:
		a.Outcome, err = "dead", errDead
	case time.Now().Before(b.downUntil):
		a.Outcome, err = "down", errBrokerDown
	default:
		b.log = append(b.log, m)
	}
	b.attempts = append(b.attempts, a)
	return err
}

func (b *broker) messages() []properties.Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]properties.Message(nil), b.log...)
}

func (b *broker) record() []Attempt {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Attempt(nil), b.attempts...)
}

// publisher is one relay incarnation's handle on the broker. Once killed
// it refuses every publish, and says so through onDead.
type publisher struct {
	b      *broker
	relay  string
	mu     sync.Mutex
	dead   bool
	onDead func(m properties.Message)
}

func (p *publisher) Publish(_ context.Context, m properties.Message) error {
	p.mu.Lock()
	dead := p.dead
	p.mu.Unlock()
	err := p.b.publish(m, p.relay, dead)
	if dead && p.onDead != nil {
		p.onDead(m)
	}
	return err
}

func (p *publisher) kill() { p.mu.Lock(); p.dead = true; p.mu.Unlock() }

func relayName(i, incarnation int) string { return fmt.Sprintf("dispatcher-%d#%d", i, incarnation) }
