package loopcheck

import (
	"fmt"
	"time"
)

// Pauser is a Subject whose relays can be frozen whole and thawed: a
// process (SIGSTOP … SIGCONT: proccheck), as a GC pause or a VM freeze
// stops one. Nothing of the relay runs meanwhile; its connections stay
// open, and its claims stand as long as whatever holds them (a lease
// runs out, a row lock does not). Thawed, it goes on as if nothing had
// happened: a stale worker that may complete a claim that is no longer
// its own. Pause and Resume act on dispatcher i's incarnation now
// running.
type Pauser interface {
	Pause(i int) error
	Resume(i int) error
}

// freeze freezes the relay that makes the next publish, just before the
// publish reaches the broker, for st.For (aimed around the lease), then
// thaws it and lets the publish go on. By the relay's clock its ack comes
// as late as the freeze lasted, so the attempt is recorded accepted-late:
// ambiguous, as the relay may have given up on it by its own deadline (a
// dead letter of an event it also delivered is then no bug). Meanwhile
// its lease may run out and another relay publish the event; the thawed
// one then publishes it again on a claim no longer its own. That is no
// fault of a lease-based outbox, which may publish twice; it is of one
// that declares its claims exclude each other through a publish
// (OncePublisher), which is why a freeze is not counted among the
// dispatcher faults that excuse a second publish. It commits a payment of
// its own, as a strand does, so that there is a publish to freeze.
func (c *check) freeze(st Step) {
	p, ok := capability[Pauser](c.subj)
	if !ok {
		c.tally.injected("freeze", noRelay, false, 0)
		c.record("Freeze", "operator", "", "skipped: the subject's relays cannot be frozen (not a Pauser)")
		return
	}
	h, got, ok := c.catchPublish("Freeze", "nothing frozen")
	if !ok {
		return
	}
	held := true
	defer func() {
		if held {
			c.bro.unhold(h)
		}
	}()
	who := dispatcher(got.index).String()
	what := fmt.Sprintf("%s, publishing %s of %s, for %s", got.relay, got.msg.ID, got.msg.AggregateID, aimText(st.For, st.Aim))
	if err := p.Pause(got.index); err != nil {
		c.tally.injected("freeze", who, false, 0)
		c.record("Freeze", who, what, "error: "+err.Error()+"; its publish goes on")
		return
	}
	c.tally.injected("freeze", who, true, 0)
	at := c.record("Freeze", who, what, "")
	start := time.Now()
	select {
	case <-time.After(st.For):
	case <-c.abort:
	case <-c.opts.Interrupt:
	}
	res := fmt.Sprintf("frozen whole just before its publish reached the broker; thawed after %v, the publish goes on", time.Since(start).Round(time.Millisecond))
	if err := p.Resume(got.index); err != nil {
		res += "; resume: " + err.Error()
	}
	h.frozeFor = time.Since(start) // its ack comes that late by the relay's clock: ambiguous
	if cr, ok := capability[ClaimReporter](c.subj); ok && cr.ReportsClaims() {
		// The thawed relay completes the claim it held: its report must
		// be in before the end state is judged, which may be at once.
		thawed := time.Since(c.bro.start)
		held = false
		c.bro.unhold(h)
		if c.awaitCompletion(got.relay, got.msg.ID, thawed, c.opts.Recovery) {
			res += "; it reported its completion"
		} else {
			res += fmt.Sprintf("; it reported no completion of %s within %v", got.msg.ID, c.opts.Recovery)
		}
	}
	c.setResult(at, res)
}

// moreKinds are the step kinds beyond stepKinds the subject can take.
func (r *runner) moreKinds() []string {
	var out []string
	if _, ok := capability[Pauser](r.subj); ok {
		out = append(out, "freeze")
	}
	if _, ok := capability[SchemaChanger](r.subj); ok {
		out = append(out, "schema-change")
	}
	if _, ok := capability[Stopper](r.subj); ok {
		out = append(out, "stop-mid-batch")
	}
	if r.js != nil {
		out = append(out, "broker-link", "window-outage")
	}
	if r.opts.CrashDatabase != nil {
		out = append(out, "crash-db")
	}
	return out
}

// FrozenPastLease is the canonical freeze story, as a schedule to
// Replay: a commit, a pause of settle (the relays start and publish it),
// then the relay making the next publish frozen for three leases (aimed
// at the lease), and a pause of a second, for its thawed publish to land:
// a stale relay that wakes past its lease, its claim taken over.
func FrozenPastLease(lease, settle time.Duration) Schedule {
	if lease == 0 {
		lease = defaultLease
	}
	return Schedule{{Kind: "commit", N: 1}, {Kind: "pause", For: settle, Settle: true},
		{Kind: "freeze", For: 3*lease + 2*time.Millisecond, Aim: lease}, {Kind: "pause", For: time.Second}}
}
