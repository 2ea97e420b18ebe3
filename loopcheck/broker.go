package loopcheck

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// The broker's outcomes, for an adapter to map onto its library's own
// errors with errors.Is: the refusals wrap harness.ErrRefused (the
// message is not in the broker: retry, count an attempt); ErrAckLost is
// harness.ErrAckLost, and ErrSlowAck comes wrapped with the caller's
// context error (the message is in the broker: the publish is
// ambiguous).
var (
	// ErrBrokerDown: the broker is down (an outage), a transient refusal.
	ErrBrokerDown = fmt.Errorf("%w (down)", harness.ErrRefused)
	// ErrRelayKilled: the calling relay incarnation was killed; a real
	// one would be gone, so nothing it sends arrives.
	ErrRelayKilled = fmt.Errorf("%w: this relay incarnation was killed", harness.ErrRefused)
	// ErrCutOff: the relay was cut off (a strand) and its publish never
	// reached the broker.
	ErrCutOff = fmt.Errorf("%w: the relay was cut off from the broker", harness.ErrRefused)
	// ErrPoison: the broker refuses this event (a poison message, a
	// permanent refusal while it lasts).
	ErrPoison = fmt.Errorf("%w: the event is poison", harness.ErrRefused)
	// ErrAckLost: the broker has the message, its acknowledgement was
	// lost.
	ErrAckLost = harness.ErrAckLost
	// ErrSlowAck: the broker has the message, and the caller's context
	// ended before its late acknowledgement came (wrapped with that
	// context's error).
	ErrSlowAck = errors.New("the broker's acknowledgement was late")
)

// Attempt is one publish the broker saw: which event, when (since the
// schedule started), from which relay incarnation, and what came of it.
type Attempt struct {
	EventID   string
	PaymentID string
	At        time.Duration
	Relay     string // "dispatcher-0#2": dispatcher 0, its second incarnation
	Outcome   string // accepted, accepted-late (a slow ack), down, dead, poison, ack-lost, crashed, no-reply (a real broker's ack did not come back over its link)
	// Expired: the caller's context was already done when it called, so
	// it cannot have recorded the outcome on that context either.
	Expired bool
	// GaveUp: a late ack the caller stopped waiting for (ErrSlowAck).
	GaveUp bool
	// Late is how late an accepted-late publish was acknowledged.
	Late time.Duration
	// Held is how long the harness held the publish back (a freeze, a
	// wedge, a stop mid-batch) between the relay's call and At: the
	// relay sent it that much earlier.
	Held time.Duration `json:",omitempty"`
}

// broker records every publish attempt and every message it accepts. It
// is down until downUntil, a point in real time, so an outage lasts what
// the schedule drew however long the steps around it take.
type broker struct {
	mu        sync.Mutex
	start     time.Time
	downUntil time.Time
	log       []harness.Message
	attempts  []Attempt
	// poison is how many more publishes of a payment's event the broker
	// refuses; forever (-1) until the end of the schedule.
	poison map[string]int
	// poisonUntil: until then, every publish of a payment's event is
	// refused (a poison for a time).
	poisonUntil map[string]time.Time
	// slowPay: until then, a payment's accepted publishes are
	// acknowledged late (a slow payment).
	slowPay map[string]lateness
	// slowUntil, slow: until then, every accepted publish is acknowledged
	// only after slow (a slow broker: the message is in, the ack late).
	slowUntil time.Time
	slow      time.Duration
	// slowFirsts: payments committed into a slow window, whose first
	// accepted publish is acknowledged as late whenever it comes.
	slowFirsts map[string]slowFirst
	ackLose    int // the next ackLose accepted publishes lose their ack
	// killers: payments whose every publish crashes the relay publishing
	// it (a crash loop), and where each such publish is announced.
	killers map[string]chan heldPublish
	// hold, if set, stops the next live publish before it reaches the
	// broker, until the harness releases it (the wedge step).
	hold *hold
	// acksUntil is when the last late ack given out comes back: the
	// harness's own delay, which the wait after healing must outlast.
	acksUntil time.Time
	// spells are the faults cast on the broker, with what each changed.
	spells []*spell
	// real is the JetStream broker behind this one (Options.JetStream):
	// what this one accepts goes on to it, and log is what its stream
	// holds (jetstream.go).
	real *realBroker
	// claims are the relays' reports of their claims and completions
	// (a ClaimReporter's); noted is closed at the next one.
	claims []claimNote
	noted  chan struct{}
}

// lateness is a slow payment: its acks are delay late until until.
type lateness struct {
	until time.Time
	delay time.Duration
}

// busyUntil is when the last late acknowledgement is due.
func (b *broker) busyUntil() time.Time { b.mu.Lock(); defer b.mu.Unlock(); return b.acksUntil }

// slowFor makes every publish accepted in the next window acknowledged
// only after d; it returns when the window ends.
func (b *broker) slowFor(window, d, aim time.Duration) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	b.endWindows("broker-slow", now) // a new window replaces the one in force
	b.slowUntil, b.slow = now.Add(window), d
	b.cast(&spell{kind: "broker-slow", from: now, until: b.slowUntil, aim: aim})
	return b.slowUntil
}

// slowFirst is a payment committed into a slow window: its first
// accepted publish is acknowledged delay late, a hit of window.
type slowFirst struct {
	window *spell
	delay  time.Duration
}

// slowFirst makes pay's first accepted publish, whenever it comes,
// acknowledged late as in the slow window in force (or last opened).
func (b *broker) slowFirst(pay string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.slowFirsts == nil {
		b.slowFirsts = map[string]slowFirst{}
	}
	for i := len(b.spells) - 1; i >= 0; i-- {
		if s := b.spells[i]; s.kind == "broker-slow" {
			b.slowFirsts[pay] = slowFirst{window: s, delay: b.slow}
			return
		}
	}
}

// slowOver says whether the slow window that was to end at until did:
// it is past, and no later window replaced it.
func (b *broker) slowOver(until time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.slowUntil.Equal(until) && !time.Now().Before(until)
}

// down says whether the broker is down now.
func (b *broker) down() bool { b.mu.Lock(); defer b.mu.Unlock(); return time.Now().Before(b.downUntil) }

// downUntilNow is when the outage under way ends; ok is false if there
// is none.
func (b *broker) downUntilNow() (until time.Time, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.downUntil, time.Now().Before(b.downUntil)
}

// outageOver says whether the outage that was to end at until did: it is
// past, nothing extended it, and no broker-up step or drain ended it.
func (b *broker) outageOver(until time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.downUntil.Equal(until) && !time.Now().Before(until)
}

// loseAck loses the acknowledgement of the next accepted publish.
func (b *broker) loseAck() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ackLose++
	b.cast(&spell{kind: "ack-lost"})
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
	b.cast(&spell{kind: "poison", pay: pay})
}

// poisonFor makes the broker refuse every publish of payment pay's event
// for d from now.
func (b *broker) poisonFor(pay string, d, aim time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.poisonUntil == nil {
		b.poisonUntil = map[string]time.Time{}
	}
	now := time.Now()
	b.poisonUntil[pay] = now.Add(d)
	b.cast(&spell{kind: "poison", pay: pay, from: now, until: now.Add(d), aim: aim})
}

// slowPayment makes every accepted publish of payment pay's event, for d
// from now, acknowledged delay late.
func (b *broker) slowPayment(pay string, d, delay, aim time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.slowPay == nil {
		b.slowPay = map[string]lateness{}
	}
	now := time.Now()
	b.slowPay[pay] = lateness{until: now.Add(d), delay: delay}
	b.cast(&spell{kind: "slow-payment", pay: pay, from: now, until: now.Add(d), aim: aim})
}

// refusing says whether the broker refuses pay's next publish as poison.
func (b *broker) refusing(pay string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.poison[pay] != 0 || time.Now().Before(b.poisonUntil[pay])
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
	b.cast(&spell{kind: "broker-down", from: now, until: until})
	if !until.After(from) {
		return 0
	}
	b.downUntil = until
	return until.Sub(from)
}

// up ends any outage now.
func (b *broker) up() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.downUntil = time.Time{}
	b.endWindows("broker-down", time.Now())
}

// heal ends, now, every broker fault that lasts a time: an outage, a
// slow window, a poison for a time, a slow payment (the drain's). A
// poison for ever, or for a number of publishes, stays: it is the
// event's, not the broker's. Acks already late still come late, and so
// does the first publish of a payment committed into a slow window: a
// schedule that ends with one would otherwise end it before any relay
// met it, and test nothing.
func (b *broker) heal() {
	b.up()
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	b.slowUntil, b.poisonUntil, b.slowPay = time.Time{}, nil, nil
	for _, k := range []string{"broker-slow", "poison", "slow-payment"} {
		b.endWindows(k, now)
	}
}

// publish is incarnation relay's publish of m; dead says it was killed.
// An accepted publish in a slow window is acknowledged after the delay,
// or fails with ctx's error if the caller gives up first: the message is
// in the broker either way (an ambiguous publish, as on a real broker).
func (b *broker) publish(ctx context.Context, m harness.Message, relay string, dead bool, rp *realPublisher, sent sending) error {
	err, wait := b.take(m, relay, dead, ctx.Err() != nil, sent)
	if rerr := b.sendReal(ctx, m, relay, rp, err); rerr != nil {
		return rerr
	}
	if err != nil || wait == 0 {
		return err
	}
	select {
	case <-time.After(wait):
		return nil
	case <-ctx.Done():
		b.gaveUp(m.ID, relay)
		return fmt.Errorf("%w: %w", ErrSlowAck, ctx.Err())
	}
}

// lateBy notes that relay's latest publish of event id, accepted, was
// acknowledged late by its own clock: it was frozen for d between sending
// it and the broker's taking it, and may have given up on it meanwhile
// (ambiguous, as any late ack is).
func (b *broker) lateBy(id, relay string, d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := len(b.attempts) - 1; i >= 0; i-- {
		if a := &b.attempts[i]; a.EventID == id && a.Relay == relay {
			if a.Outcome == "accepted" {
				a.Outcome, a.Late = "accepted-late", d
			}
			return
		}
	}
}

// gaveUp notes that relay's latest publish of event id ended before its
// late acknowledgement came: the relay does not know it was accepted.
func (b *broker) gaveUp(id, relay string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := len(b.attempts) - 1; i >= 0; i-- {
		if a := &b.attempts[i]; a.EventID == id && a.Relay == relay {
			a.GaveUp = true
			return
		}
	}
}

// sending is how the harness let one publish through: how long it held
// it back, and whether the publish's ack is to be lost (a window-outage
// step's).
type sending struct {
	held    time.Duration
	loseAck bool
}

// take records the attempt and decides it; wait is the ack's delay.
func (b *broker) take(m harness.Message, relay string, dead, expired bool, sent sending) (error, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	a := Attempt{EventID: m.ID, PaymentID: m.AggregateID, At: time.Since(b.start), Relay: relay, Outcome: "accepted", Expired: expired, Held: sent.held}
	var err error
	switch {
	case dead:
		a.Outcome, err = "dead", ErrRelayKilled
	case b.poison[m.AggregateID] != 0 || time.Now().Before(b.poisonUntil[m.AggregateID]):
		a.Outcome, err = "poison", ErrPoison
		if b.poison[m.AggregateID] > 0 {
			b.poison[m.AggregateID]--
		}
		b.hitLatest("poison", m.AggregateID)
	case time.Now().Before(b.downUntil):
		a.Outcome, err = "down", ErrBrokerDown
		b.hitWindows("broker-down", time.Now())
	default:
		if b.real == nil { // else the stream has it once sent (sendReal)
			b.log = append(b.log, m)
		}
		switch {
		case sent.loseAck:
			a.Outcome, err = "ack-lost", ErrAckLost
		case b.ackLose > 0:
			b.ackLose--
			a.Outcome, err = "ack-lost", ErrAckLost
			b.hitOldestUnhit("ack-lost")
		}
	}
	var wait time.Duration
	now := time.Now()
	if err == nil && now.Before(b.slowUntil) {
		b.hitWindows("broker-slow", now)
		wait = b.slow
	}
	if f, ok := b.slowFirsts[m.AggregateID]; ok && err == nil {
		delete(b.slowFirsts, m.AggregateID)
		if wait == 0 {
			f.window.hits++ // after its window: hitWindows did not count it
		}
		wait = max(wait, f.delay)
	}
	if l := b.slowPay[m.AggregateID]; err == nil && now.Before(l.until) {
		b.hitLatest("slow-payment", m.AggregateID)
		wait = max(wait, l.delay)
	}
	if wait > 0 {
		a.Outcome, a.Late = "accepted-late", wait
		if until := now.Add(wait); until.After(b.acksUntil) {
			b.acksUntil = until
		}
	}
	b.attempts = append(b.attempts, a)
	return err, wait
}

// ambiguous lists the payments the subject may not know were published:
// an ack lost or late, or an attempt after an accepted one (the relay was
// cut or killed before it recorded the success, and tried again). Such a
// payment may end dead and delivered in a correct outbox.
func (b *broker) ambiguous() map[string]bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	out, accepted := map[string]bool{}, map[string]bool{}
	for _, a := range b.attempts {
		if a.Outcome == "ack-lost" || a.Outcome == "accepted-late" || a.Outcome == "no-reply" || accepted[a.PaymentID] {
			out[a.PaymentID] = true
		}
		if a.Outcome == "accepted" || a.Outcome == "accepted-late" || a.Outcome == "ack-lost" || a.Outcome == "no-reply" {
			accepted[a.PaymentID] = true
		}
	}
	return out
}

func (b *broker) messages() []harness.Message {
	_ = b.fetch() // a failed read is read again next time (read() reports it)
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]harness.Message(nil), b.log...)
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
	index  int // the dispatcher's
	mu     sync.Mutex
	dead   bool
	gone   chan struct{} // closed once killed for good: a publish that crashed it returns
	onDead func(m harness.Message)
	real   *realPublisher // its connection to the real broker, if there is one
}

func (p *publisher) Publish(ctx context.Context, m harness.Message) error {
	p.mu.Lock()
	dead := p.dead
	p.mu.Unlock()
	if !dead && p.b.crashes(p, m) {
		<-p.gone // its process died here: nothing returns until the harness has killed it
		return ErrRelayKilled
	}
	var sent sending
	held, start := p.b.takeHold(dead), time.Now()
	if h := held; h != nil {
		h.held <- heldPublish{relay: p.relay, index: p.index, msg: m}
		select {
		case <-h.release:
			if h.dropped {
				return ErrCutOff
			}
		case <-ctx.Done():
			return ctx.Err() // given up on while held: it never reached the broker
		}
	}
	if h := held; h != nil {
		sent = sending{held: time.Since(start), loseAck: h.loseAck}
	}
	err := p.b.publish(ctx, m, p.relay, dead, p.real, sent)
	if h := held; h != nil && h.frozeFor > 0 && err == nil {
		p.b.lateBy(m.ID, p.relay, h.frozeFor)
	}
	if dead && p.onDead != nil {
		p.onDead(m)
	}
	return err
}

func (p *publisher) kill() {
	p.mu.Lock()
	p.dead = true
	p.mu.Unlock()
	p.real.close() // its process's connection ends with it
}

// buried ends a publish its event crashed: only once the incarnation is
// wholly dead (its link down, its sessions ended, its context cancelled),
// so that nothing it does on the way out reaches anything, as after a
// real process's death.
func (p *publisher) buried() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.gone:
	default:
		close(p.gone)
	}
}

func relayName(i, incarnation int) string { return fmt.Sprintf("dispatcher-%d#%d", i, incarnation) }

// hold is a publish the harness stops on its way to the broker.
type hold struct {
	held    chan heldPublish // gets the publish it stopped (buffered: 1)
	release chan struct{}    // closed: the publish goes on
	// dropped, set before release is closed, ends the publish refused
	// instead (a strand's: it never reaches the broker).
	dropped bool
	once    sync.Once
	// frozeFor, set before release is closed, is how long the relay that
	// made the held publish was frozen (freeze): its ack comes that late
	// by its own clock.
	frozeFor time.Duration
	// loseAck, set before release is closed, loses the held publish's
	// ack: the broker has it, the relay does not know (window-outage).
	loseAck bool
}

// drop ends the held publish refused (ErrCutOff), once.
func (h *hold) drop() {
	h.once.Do(func() { h.dropped = true; close(h.release) })
}

type heldPublish struct {
	relay string
	index int
	msg   harness.Message
}

// holdNext stops the next live publish until release is closed.
func (b *broker) holdNext() *hold {
	h := &hold{held: make(chan heldPublish, 1), release: make(chan struct{})}
	b.mu.Lock()
	b.hold = h
	b.mu.Unlock()
	return h
}

// unhold drops a hold nobody took.
func (b *broker) unhold(h *hold) {
	b.mu.Lock()
	if b.hold == h {
		b.hold = nil
	}
	b.mu.Unlock()
	close(h.release)
}

func (b *broker) takeHold(dead bool) *hold {
	if dead {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	h := b.hold
	b.hold = nil
	return h
}

// blocked says why a publish committed now might not be carried at once:
// the broker down, slow, still holding late acks, or pay poisoned.
func (b *broker) blocked(pay string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	switch {
	case now.Before(b.downUntil):
		return "the broker is down"
	case now.Before(b.slowUntil) || now.Before(b.acksUntil):
		return "the broker is slow"
	case b.slowFirsts[pay].window != nil:
		return pay + " was committed into a slow window"
	case b.poison[pay] != 0 || now.Before(b.poisonUntil[pay]):
		return pay + " is poison"
	case now.Before(b.slowPay[pay].until):
		return pay + " is slow"
	}
	return ""
}
