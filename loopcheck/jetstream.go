package loopcheck

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/outboxcheck/outboxcheck/brokers/jetstream"
	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
)

// realBroker is the JetStream broker behind a check's broker
// (Options.JetStream): the harness's own broker decides its faults first
// (an outage, a poison, a killed relay refuse a publish before it is
// sent), and what it accepts is sent on over the broker's link. The
// stream is the broker's log: the consumer gets, and the judge reads,
// what it holds.
type realBroker struct {
	js      *jetstream.Broker
	mu      sync.Mutex // one read of the stream at a time
	fetched uint64     // the last sequence number read into the log
}

// realPublisher is one relay incarnation's connection to the real
// broker; it ends when the incarnation is killed or stopped.
type realPublisher struct {
	p    *jetstream.Publisher
	err  error // it could not connect
	once sync.Once
}

func (rp *realPublisher) close() {
	if rp != nil && rp.p != nil {
		rp.once.Do(rp.p.Close)
	}
}

// useJetStream makes the check's broker forward to the runner's real
// one, emptied for this schedule.
func (c *check) useJetStream() error {
	if c.runner.js == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(c.ctx, 2*c.opts.CallTimeout)
	defer cancel()
	if err := c.runner.js.Reset(ctx); err != nil {
		return err
	}
	c.bro.real = &realBroker{js: c.runner.js}
	return nil
}

// realPublisher connects relay's incarnation to the real broker, if
// there is one.
func (c *check) realPublisher(relay string) *realPublisher {
	if c.runner.js == nil {
		return nil
	}
	p, err := c.runner.js.NewPublisher(relay)
	return &realPublisher{p: p, err: err}
}

// sendReal sends m on to the real broker when the harness's broker took
// it (taken: nil, or an ack it is to lose): its result is the publish's
// unless the wire failed it. A publish whose ack does not come back over
// the link is ambiguous: the stream may hold it.
func (b *broker) sendReal(ctx context.Context, m harness.Message, relay string, rp *realPublisher, taken error) error {
	if b.real == nil || (taken != nil && !errors.Is(taken, ErrAckLost)) {
		return nil
	}
	var err error
	switch {
	case rp == nil:
		err = errors.New("no connection to the broker")
	case rp.err != nil:
		err = rp.err
	default:
		err = rp.p.Publish(ctx, m)
	}
	if err == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := len(b.attempts) - 1; i >= 0; i-- {
		if a := &b.attempts[i]; a.EventID == m.ID && a.Relay == relay {
			a.Outcome = "no-reply"
			break
		}
	}
	if errors.Is(err, harness.ErrAckLost) {
		return err
	}
	return fmt.Errorf("%w: %w", harness.ErrAckLost, err)
}

// fetch reads what the stream holds beyond what the log has.
func (b *broker) fetch() error {
	if b.real == nil {
		return nil
	}
	b.real.mu.Lock()
	defer b.real.mu.Unlock()
	msgs, err := b.real.js.Since(context.Background(), b.real.fetched)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range msgs {
		b.log = append(b.log, m.Message)
		b.real.fetched = m.Seq
	}
	return nil
}

// maxBrokerLinkFault is how long a broker-link fault lasts at most: the
// step heals it after its For.
const maxBrokerLinkFault = 1500 * time.Millisecond

// brokerLink puts a network fault on the wire between the relays and
// the real broker for st.For, then heals it (the drain heals it too): a
// partition holds publishes and their acks, a reset ends connections,
// a lost reply loses an ack the stream's message was stored for. It
// commits a payment into the window, so that a publish meets it (a
// fault on a quiet wire tests nothing).
func (c *check) brokerLink(st Step) {
	if c.runner.js == nil {
		c.record("BrokerLink", "broker", st.String(), "skipped: the broker is the harness's own (Options.JetStream is off)")
		return
	}
	net := c.runner.js.Net
	if err := net.Inject(jetstream.Link, faults.Fault{Kind: st.Fault, DelayMs: 20}); err != nil {
		c.record("BrokerLink", "broker", st.String(), "error: "+err.Error())
		return
	}
	c.tally.partition("broker", st.Fault)
	c.tally.injected("broker-link", "broker", true, 0)
	c.disturbFor(st.For + c.opts.Lease)
	c.record("BrokerLink", "broker", st.String(), "")
	until := time.Now().Add(st.For)
	c.timersMu.Lock()
	c.timers = append(c.timers, time.AfterFunc(time.Until(until), func() {
		if c.healBrokerLink() {
			c.record("BrokerLinkHealed", "broker", string(st.Fault), "")
		}
	}))
	c.timersMu.Unlock()
	c.produce(true)
}

// healBrokerLink heals the real broker's link (a broker-link step's
// end, the drain's, a new schedule's), and says whether it was faulty.
// A publish under way through the fault may have lost its ack on the
// wire, and its relay then waits out its own deadline for it, as a
// correct relay of any design would: the harness counts that wait as its
// own (as a late ack it holds back), so the judge's idle bound starts
// after it.
func (c *check) healBrokerLink() bool {
	if c.runner.js == nil || !c.runner.js.Net.Faulty(jetstream.Link) {
		return false
	}
	c.runner.js.Net.Heal(jetstream.Link)
	c.bro.busyTill(time.Now().Add(c.ackWait()))
	return true
}

// ackWait is how long a relay may wait for an ack lost on the broker's
// wire: the longest deadline it declares (Deadliner), the lease, or the
// harness's call timeout, whichever is longest.
func (c *check) ackWait() time.Duration {
	return max(slices.Max(c.runner.aims()), c.opts.CallTimeout)
}

// busyTill makes the broker busy until t at least (busyUntil).
func (b *broker) busyTill(t time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t.After(b.acksUntil) {
		b.acksUntil = t
	}
}

// storedTwice counts the messages the real broker's stream holds of an
// event it already held (0 without one, or when the stream cannot be
// read: a figure, not a judgement).
func (b *broker) storedTwice() int {
	if b.real == nil || b.fetch() != nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	seen, n := map[string]bool{}, 0
	for _, m := range b.log {
		if seen[m.ID] {
			n++
		}
		seen[m.ID] = true
	}
	return n
}

// stored adds a schedule's stored-twice count.
func (t *tally) stored(n int) { t.mu.Lock(); t.storedTwice += n; t.mu.Unlock() }
