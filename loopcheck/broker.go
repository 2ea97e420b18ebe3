package loopcheck

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/outboxcheck/outboxcheck/properties"
)

var (
	errBrokerDown = errors.New("broker refused the publish (down)")
	errDead       = errors.New("broker refused the publish: this relay incarnation was killed")
	errPoison     = errors.New("broker refused the publish: the event is poison")
)

// Attempt is one publish the broker saw: which event, when (since the
// schedule started), from which relay incarnation, and what came of it.
type Attempt struct {
	EventID   string
	PaymentID string
	At        time.Duration
	Relay     string // "dispatcher-0#2": dispatcher 0, its second incarnation
	Outcome   string // accepted, down, dead, poison
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
	// poison is how many more publishes of a payment's event the broker
	// refuses; forever (-1) until the end of the schedule.
	poison map[string]int
}

// forever is a poison that never wears off.
const forever = -1

// setPoison makes the broker refuse the next n publishes of payment pay's
// event (forever: every one).
func (b *broker) setPoison(pay string, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.poison == nil {
		b.poison = map[string]int{}
	}
	b.poison[pay] = n
}

// poisoned lists the payments poisoned forever.
func (b *broker) poisoned() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for pay, n := range b.poison {
		if n == forever {
			out = append(out, pay)
		}
	}
	slices.Sort(out)
	return out
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
	case b.poison[m.AggregateID] != 0:
		a.Outcome, err = "poison", errPoison
		if b.poison[m.AggregateID] > 0 {
			b.poison[m.AggregateID]--
		}
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

// tries counts the publish attempts per payment of live relays (a killed
// incarnation's are not the subject's attempts any more).
func (b *broker) tries() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := map[string]int{}
	for _, a := range b.attempts {
		if a.Outcome != "dead" {
			n[a.PaymentID]++
		}
	}
	return n
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
