package loopcheck

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
)

// check is one schedule's run.
type check struct {
	*runner
	ctx    context.Context
	bro    *broker
	start  time.Time
	paid   map[string]bool // committed payments
	maybe  map[string]bool // commits whose outcome is unknown
	voided map[string]bool // rolled back
	pays   int
	// incarnations counts each dispatcher's incarnations started in this
	// schedule: dispatcher-0#2 is dispatcher 0's second.
	incarnations map[int]int
	// begun is when each payment's transaction began, since the schedule
	// started: no relay can have claimed its event before then.
	begun map[string]time.Duration
	// hardBound is the hard bound the wait after healing had: HardBound,
	// or longer for a late ack aimed at a long deadline.
	hardBound time.Duration
	// downtime is the broker downtime granted so far, against RetryBudget
	// unless the subject shows its dead letters.
	downtime time.Duration
	// dispatcherFaults counts kills and partitions of dispatcher links:
	// each may cost an event an attempt its subject never recorded.
	dispatcherFaults int
	// disturbances are the spans in which a relay may have been cut off
	// from recording a failure (backoff leaves them out).
	disturbMu    sync.Mutex
	disturbances []window
	openDisturb  map[string]int // link → its open disturbance

	holds   []chan struct{} // held-open transactions: closing one ends it
	holding atomic.Int32    // how many are open now
	// strands are the publishes stranded relays are stuck in.
	strands []*hold
	holdWG  sync.WaitGroup
	// timers record the ends of broker windows in the story.
	timersMu sync.Mutex
	timers   []*time.Timer
	// failed is a failure a step itself found (relay-isolation's probe).
	failed *harness.Failure
	// crashFailed: a crash-db step could not bring the server back, or
	// the harness's own session to it: the infrastructure's failure.
	crashFailed error
	// judged counts the schedule's judgements of each property.
	judged judged
	// quitter is the first relay incarnation whose Dispatch returned
	// unasked, and quitErr what it returned (relayLiveness).
	quitMu  sync.Mutex
	quitter string
	quitErr error
	// fault is the subject's first broken protocol (noteFault).
	faultMu sync.Mutex
	fault   harness.SubjectFault

	histMu sync.Mutex // the story is written from the subject's goroutines too
	hist   harness.History
	// at is the schedule step running (from 1), whose number every entry
	// recorded meanwhile takes; 0 before the first and from the drain on.
	at int

	handling  sync.Mutex
	mu        sync.Mutex
	acked     map[string]bool // event_id → a delivery was acknowledged
	delivered []harness.Message
	// handleErr is each event's last failed delivery's error: what a
	// payment carried but never taking effect met.
	handleErr map[string]error
	again     []harness.Message // crashed deliveries, to deliver again

	// schemaChanges counts the schedule's schema changes so far.
	schemaChanges int

	relays    []*relay
	lingering []*relay // killed, yet Dispatch had not returned
	stopC     context.CancelFunc
	consWG    sync.WaitGroup
	prod      producer
}

func (r *runner) run(s Schedule) (f *harness.Failure, err error) {
	r.judged = judged{} // none yet: a schedule that ends before its steps judged nothing
	now := time.Now()
	c := &check{runner: r, ctx: context.Background(), start: now, bro: newBroker(now), paid: map[string]bool{},
		maybe: map[string]bool{}, voided: map[string]bool{}, begun: map[string]time.Duration{}, acked: map[string]bool{}, handleErr: map[string]error{}, relays: make([]*relay, r.opts.Dispatchers)}
	c.prod = c.newProducer()
	r.outcomes, r.failedAt = nil, 0
	if err := c.healAll(); err != nil {
		return nil, err
	}
	c.healBrokerLink()
	if err := c.useJetStream(); err != nil {
		return nil, err
	}
	if err := c.setZone(s.zone()); err != nil {
		return nil, err
	}
	if z := s.zone(); z != "UTC" {
		c.tally.injected("timezone", z, true, 0)
	}
	if err := c.reset(); err != nil {
		if c.noteFault(err) {
			return c.faulted(), nil
		}
		return nil, fmt.Errorf("reset: %w", err)
	}
	defer c.shutdown()
	defer func() { r.judged = c.judged }()
	defer func() {
		c.histMu.Lock()
		defer c.histMu.Unlock()
		r.story = harness.History{Entries: append([]harness.Entry(nil), c.hist.Entries...)}
	}()
	if !s.cold() {
		for i := range r.opts.Dispatchers {
			c.startRelay(i)
		}
	}
	c.startConsumer()
	for i, st := range s {
		if r.abandoned() {
			return nil, errInterrupted
		}
		c.setStep(i + 1)
		if f := c.stepAndCheck(st); f != nil {
			r.failedAt = i + 1
			return f, nil
		}
	}
	c.setStep(0)
	c.record("Drain", "operator", "heal every link, end the broker's outages, slow windows and timed poisons, end held transactions and stranded publishes, restart every dispatcher; wait for quiescence", "")
	c.endHolds()
	c.endStrands()
	if err := c.healAll(); err != nil {
		return nil, err
	}
	c.healBrokerLink()
	c.bro.heal()
	for i := range r.opts.Dispatchers {
		if c.relays[i] == nil {
			c.startRelay(i)
		}
	}
	judged, err := c.quiesce()
	c.sampleSlots()
	if ff := c.faulted(); ff != nil && err == nil {
		return ff, nil // a broken protocol noted while judging outranks what was judged
	}
	return judged, err
}

// stepAndCheck runs a step and the checks made after every step.
func (c *check) stepAndCheck(st Step) *harness.Failure {
	c.step(st)
	if f := c.faulted(); f != nil {
		return f
	}
	if c.crashFailed != nil {
		return infraOrSubject(fmt.Errorf("crash the database: %w", c.crashFailed))
	}
	if c.failed != nil {
		return c.failed
	}
	if f := c.relayLiveness(); f != nil {
		return f
	}
	c.judged.step("relay-liveness")
	c.sampleSlots()
	return c.atMostOnce()
}

// zone is the TimeZone the schedule's sessions run in: its first
// timezone step's, else UTC.
func (s Schedule) zone() string {
	for _, st := range s {
		if st.Kind == "timezone" {
			return st.Zone
		}
	}
	return "UTC"
}

// setZone makes zone the TimeZone of every session that starts in the
// database from now on: the relays' and the producer's start with the
// schedule. (The operator's session and one the subject keeps across
// schedules keep the zone they started in.)
func (c *check) setZone(zone string) error {
	return c.call(func(ctx context.Context) error {
		var db string
		if err := c.admin.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil {
			return err
		}
		_, err := c.admin.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s SET TimeZone TO %s",
			pgx.Identifier{db}.Sanitize(), quote(zone)))
		return err
	})
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// healAll heals every link and brings every killed dispatcher's link up.
func (c *check) healAll() error {
	for _, l := range c.links {
		c.net.Heal(l)
		c.calm(l)
		if err := c.net.Up(l); err != nil {
			return fmt.Errorf("bring link %s up: %w", l, err)
		}
	}
	return nil
}

func (c *check) call(fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.CallTimeout)
	defer cancel()
	return fn(ctx)
}

// ResetTimeout bounds the subject's Reset before each schedule: the
// harness's own setup, not a judged call, whose work (a checkpoint, a
// replication slot's sessions ended and its position moved on) takes
// seconds on a loaded server. A proccheck subject's operator gets the
// same bound.
const ResetTimeout = 30 * time.Second

// reset runs the subject's Reset under ResetTimeout, and once more if
// that ran out: a slow server is not broken (CI's loaded run had a CDC
// relay's reset, checkpoint included, outlast the 2 s of a call).
func (c *check) reset() error {
	var err error
	for range 2 {
		ctx, cancel := context.WithTimeout(c.ctx, ResetTimeout)
		err = c.subj.Reset(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
	}
	return err
}

// setStep numbers the entries recorded from now on with schedule step n
// (0: the drain).
func (c *check) setStep(n int) {
	c.histMu.Lock()
	defer c.histMu.Unlock()
	c.at = n
}

// record adds an entry to the story, numbered with the schedule step that
// made it (one step may make several: a commit of three payments, a
// wedge and its probe), and returns its index.
func (c *check) record(action, actor, input, result string) int {
	c.histMu.Lock()
	defer c.histMu.Unlock()
	c.hist.Entries = append(c.hist.Entries, harness.Entry{Step: c.at,
		Clock: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Since(c.start)), Action: action, Actor: actor, Input: input, Result: result})
	return len(c.hist.Entries) - 1
}

// setResult sets the result of entry i, if i is one.
func (c *check) setResult(i int, result string) {
	c.histMu.Lock()
	defer c.histMu.Unlock()
	if i >= 0 && i < len(c.hist.Entries) {
		c.hist.Entries[i].Result = result
	}
}

func (c *check) fail(property, msg string) *harness.Failure {
	c.histMu.Lock()
	defer c.histMu.Unlock()
	if n := len(c.hist.Entries); n > 0 {
		c.hist.Entries[n-1].Expect = "[" + property + "] " + msg
	}
	h := harness.History{Entries: append([]harness.Entry(nil), c.hist.Entries...)}
	return &harness.Failure{Property: property, Message: msg, History: &h}
}

func (c *check) shutdown() {
	c.stopTimers()
	c.endHolds()
	c.endStrands()
	for i := range c.relays {
		c.kill(i, false)
	}
	c.awaitLingering()
	c.tally.attempts(c.bro.record())
	c.tally.stored(c.bro.storedTwice())
	c.tally.spells(c.bro.castSpells())
	if c.stopC != nil {
		c.stopC()
		c.consWG.Wait()
	}
	c.prod.close()
}

func (c *check) step(st Step) {
	switch st.Kind {
	case "commit", "rollback":
		for range max(st.N, 1) {
			c.produce(st.Kind == "commit")
		}
	case "partition":
		if err := c.net.Inject(st.Link, faults.Fault{Kind: st.Fault, After: st.After, DelayMs: 20}); err != nil {
			c.record("Partition", st.Link, st.String(), "error: "+err.Error())
			return
		}
		c.tally.partition(st.Link, st.Fault)
		if strings.HasPrefix(st.Link, "dispatcher") {
			c.dispatcherFaults++
			c.disturb(st.Link, false)
		}
		c.record("Partition", st.Link, fmt.Sprintf("%s after %d requests", st.Fault, st.After), "")
	case "heal":
		c.net.Heal(st.Link)
		c.calm(st.Link)
		c.record("Heal", st.Link, "", "")
	case "kill":
		c.dispatcherFaults++
		c.tally.injected("kill", dispatcher(st.N).String(), c.kill(st.N, true), 0)
	case "restart":
		c.restart(st.N)
	case "stop":
		c.dispatcherFaults++
		running, killed := c.stop(st.N)
		c.tally.injected("stop", dispatcher(st.N).String(), running, btoi(killed))
	case "hold-tx":
		c.tally.injected("hold-tx", "database", c.holdTx(st.For), 0)
	case "wedge":
		c.tally.wedgeStep()
		c.failed = c.wedge()
	case "strand":
		c.failed = c.strand()
	case "head-of-line":
		c.failed = c.headOfLine()
	case "crash-loop":
		c.failed = c.crashLoop()
	case "freeze":
		c.freeze(st)
	case "cold":
		c.coldStep()
	case "schema-change":
		c.schemaChange()
	case "stop-mid-batch":
		c.stopMidBatch()
	case "broker-link":
		c.brokerLink(st)
	case "window-outage":
		c.windowOutage(st)
	case "crash-db":
		c.crashDB()
	case "broker-down":
		c.brokerDown(st.For)
	case "broker-up":
		c.bro.up()
		c.record("BrokerUp", "broker", "", "")
	case "poison":
		c.poison(st)
	case "slow-payment":
		c.slowPayment(st)
	case "broker-slow":
		c.brokerSlow(st)
	case "ack-lost":
		c.bro.loseAck()
		c.record("AckLost", "broker", "the next accepted publish loses its acknowledgement", "")
	case "crash-consumer":
		c.crashConsumer(st)
	case "timezone":
		c.record("TimeZone", "operator", st.Zone, "the database's sessions start in it")
	case "redeliver":
		msgs := c.bro.messages()
		c.tally.injected("redeliver", consumer, len(msgs) > 0, 0)
		if len(msgs) == 0 {
			c.record("Deliver", consumer, "again: message #"+fmt.Sprint(st.N+1), "skipped: the broker has no message yet")
			return
		}
		m := msgs[st.N%len(msgs)]
		err := c.deliver(c.ctx, m)
		c.record("Deliver", consumer, "again: "+m.ID, result(err, "acknowledged"))
	case "pause": // recorded when it begins, as every other step is
		if st.Settle {
			c.record("Pause", "operator", st.For.String(), "settle: the shrinker put it in, so that the story does not race")
		} else {
			c.record("Pause", "operator", st.For.String(), "")
		}
		time.Sleep(st.For)
	}
}

// poison makes the broker refuse a payment's event (the last one written,
// or one to come), for ever, for a number of publishes or for a time.
// For ever only where the subject shows its dead letters: a correct
// outbox without them retries for ever, and would never deliver it; for
// a time, for such a subject, within the retry budget (each payment its
// own, apart from the broker's outages).
func (c *check) poison(st Step) {
	pay, input := fmt.Sprintf("pay-%d", c.pays+st.N), st.poisonText()
	_, shows := capability[DeadLetterer](c.subj)
	switch {
	case st.For > 0:
		d := st.For
		if !shows && d > c.opts.RetryBudget {
			d = c.opts.RetryBudget
			input += fmt.Sprintf(", cut to %v: the retry budget (the subject shows no dead letters)", d)
		}
		c.bro.poisonFor(pay, d, st.Aim)
		c.disturbFor(d + c.opts.Lease)
	case st.After > 0:
		c.bro.setPoison(pay, st.After)
	case shows:
		c.bro.setPoison(pay, forever)
	default:
		c.bro.setPoison(pay, 3)
		input = "for 3 publishes (for ever is only for a subject that shows its dead letters)"
	}
	c.record("Poison", "broker", pay+" "+input, "")
}

// slowPayment makes the broker acknowledge a payment's event (the last
// one written, or one to come) late, for a time.
func (c *check) slowPayment(st Step) {
	pay := fmt.Sprintf("pay-%d", c.pays+st.N)
	c.bro.slowPayment(pay, st.For, st.Delay, st.Aim)
	c.disturbFor(st.For + st.Delay + c.opts.Lease)
	c.record("SlowPayment", "broker", fmt.Sprintf("%s for %s: each accepted publish of it acknowledged %s late", pay, aimText(st.For, st.Aim), aimText(st.Delay, st.Aim)), "")
}

func result(err error, ok string) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return ok
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
