package stepcheck

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/model"
)

// pubState is where a held claim is in publish → mark.
type pubState uint8

const (
	unpublished pubState = iota
	acked                // the broker acknowledged: MarkPublished is next
	refused              // the broker refused: MarkFailed is next
)

// held is a claim in a dispatcher's memory.
type held struct {
	c     Claimed
	state pubState
	cause error // why the publish failed, for MarkFailed
}

// machine is one check: a subject, the model it must agree with, the
// broker, the dispatchers' memories and the history.
type machine struct {
	ctx     context.Context
	opts    Options
	subj    Subject
	m       model.State
	broker  *Broker
	held    [][]held
	crashed []bool
	hist    *History
	pays    int

	lastCommit time.Time // harness time of the last producer commit
	dbCrashed  bool      // CrashDatabase ran in this check

	afterCleanup bool
	published    string // the claim whose Publish ran last, until the next observation
	brokerSeen   int    // broker messages already put on a history entry (flushBroker)

	swarm   swarm      // the kinds this check may use (DrawSwarm)
	prior   *priorRead // the last read-back (readback.go)
	called  bool       // a subject call ran since the last read-back
	links   *links
	fresh   map[Actor]bool // actors whose session was cut in this check (fresh.go)
	unheard map[Actor]bool // actors whose link a settle cut since their subject last heard of a crash
	harness *ownSession
	sum     *Summary
	run     *runner

	early    string                           // the fault that ended the last call early, or ""
	draining bool                             // the drain is running: its calls get a plumbing deadline (callTimeout)
	drainTry int                              // which try of a drain call this is, from 0
	logf     func(format string, args ...any) // the check's log (see steps)
}

func newMachine(r *runner) *machine {
	return &machine{ctx: r.ctx, opts: r.opts, subj: r.subj, m: model.New(r.opts.Start, r.opts.Semantics),
		broker: &Broker{}, held: make([][]held, r.opts.Dispatchers),
		crashed: make([]bool, r.opts.Dispatchers), hist: &History{},
		links: r.links, fresh: map[Actor]bool{}, unheard: map[Actor]bool{}, harness: r.harness, sum: &r.sum, run: r}
}

// call runs one call of actor a; if it fails, the actor's in-flight work
// is settled before anyone looks at its outcome.
func (m *machine) call(t *rapid.T, a Actor, fn func(ctx context.Context) error) error {
	err := m.do(a, fn)
	if err != nil {
		m.settle(t, a)
	}
	return err
}

// do runs one call of actor a under the per-call deadline.
func (m *machine) do(a Actor, fn func(ctx context.Context) error) error {
	return m.doAs(a, SpentCalls, fn)
}

// doAs is do, its time counted as kind s (a call that ran into its
// deadline as SpentDeadlines). A call that a fault of the harness's own
// keeps from an answer before its deadline has its deadline brought
// forward (watchStalls): it fails as it would have, only sooner.
// Plumbing (a read-back, a reset) is retried instead: see plumb.
func (m *machine) doAs(a Actor, s Spent, fn func(ctx context.Context) error) error {
	if s != SpentReadBacks && s != SpentNone { // together sets it for its calls
		m.called = true // it may have changed what is stored
	}
	if isPlumbing(s) {
		return m.plumb(a, s, fn)
	}
	return m.doWithin(a, s, m.callTimeout(), fn)
}

// doWithin runs one call of actor a under a deadline of timeout.
func (m *machine) doWithin(a Actor, s Spent, timeout time.Duration, fn func(ctx context.Context) error) error {
	ctx, cancel := newCallCtx(m.ctx, timeout)
	defer cancel()
	defer m.watchStalls(a, ctx)()
	if s != SpentNone { // together's calls run at once: it notes nothing
		m.early = ""
		defer func() { m.early = ctx.earlyWhy() }()
	}
	start := time.Now()
	defer func() {
		if s == SpentCalls && ctx.Err() != nil {
			s = SpentDeadlines
			m.sum.Time.CountDeadline(ctx.endedEarly())
		}
		m.since(s, start)
	}()
	defer func() {
		if p := recover(); p != nil {
			m.run.record(Failure{Panic: true, Message: fmt.Sprintf("the subject panicked: %v", p), History: m.hist.Clone()})
			panic(p) // rapid reports it with its traceback
		}
	}()
	return fn(ctx)
}

func (m *machine) outcome(err error) model.Outcome {
	switch {
	case err == nil:
		return model.Done
	case m.subj.Indeterminate(err):
		return model.Unknown
	}
	return model.NotDone
}

func (m *machine) record(action string, a Actor, input string) *Entry {
	m.flushBroker()
	m.early = ""
	return m.hist.Add(Entry{Clock: m.m.Now, Action: action, Actor: a.String(), Input: input})
}

// report fails the check on the first problem, most specific property first.
//
// rapid takes two failures to be the same when their message and the line
// that failed are: it shrinks only towards the same failure, and gives up
// shrinking when a replay of one input fails differently. So the message
// is the property alone (the details and the story go to the log): with
// concurrent steps the details (which claim took which row) may differ from
// replay to replay while the bug is the same. And while shrinking, another
// property's failure fails from another line, so rapid does not drift to
// a counterexample of some other property.
func (m *machine) report(t *rapid.T, ps []model.Problem) {
	p, ok := model.First(ps)
	if !ok {
		return
	}
	m.judgeSubject(t, brokenInsteadOfViolation) // a broken operation explains what follows from it
	p.Detail += m.definiteHint()
	if e := m.last(); e != nil {
		e.Expect = p.String() // where the model and the subject part ways
		m.flushBroker()
		if e.Rows == nil {
			m.readBackForReport() // failed before its read-back
		}
	}
	m.logf("property violated: %s: %s\ncounterexample: %d steps\n%s", p.Property, p, len(m.hist.Entries), m.hist.Story())
	if f := m.run.sum.Failure; f != nil && f.Property != p.Property {
		t.Fatalf("property violated: %s (shrinking a failure of %q: not the same failure)", p.Property, f.Property)
	}
	m.run.record(Failure{Property: p.Property, Message: p.Detail, History: m.hist.Clone()})
	t.Fatalf("property violated: %s", p.Property)
}

// infra fails the check as an infrastructure error: never a property.
//
// While a violation is being shrunk, the candidate is given up instead:
// it passes, and the violation stays the verdict (shrinkguard.go).
func (m *machine) infra(t *rapid.T, what string, err error) {
	if m.early != "" {
		what += " (ended early: " + m.early + ")"
	}
	if m.run.shrinkingViolation() {
		m.run.discard(fmt.Sprintf("a candidate met infrastructure trouble: %s: %v", what, err))
	}
	m.run.record(Failure{Infrastructure: true, Message: fmt.Sprintf("%s: %v", what, err), History: m.hist.Clone()})
	t.Fatalf("infrastructure error: %s: %v", what, err)
}

func result(err error, ok string) string {
	if err != nil {
		return "error: " + normalize(err.Error())
	}
	return ok
}

// volatile matches the parts of error texts that differ between runs of
// one seed (ports, database names), so that histories compare equal.
var volatile = regexp.MustCompile(`127\.0\.0\.1:\d+|outboxcheck_[0-9a-f]{16}`)

func normalize(s string) string { return volatile.ReplaceAllString(s, "…") }

// pickDispatcher draws a dispatcher that is up (crashed: false) or down.
// Preconditions are checked before any draw, so a skip costs rapid nothing.
func (m *machine) pickDispatcher(t *rapid.T, crashed bool) int {
	var ds []int
	for d, c := range m.crashed {
		if c == crashed {
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 {
		skip("no such dispatcher")
	}
	return rapid.SampledFrom(ds).Draw(t, "dispatcher")
}

// Commit runs a producer transaction for a new payment. Two commits never
// share an instant: the claim order (available_at, created_at) has no tie
// breaker, so tied rows would come back in whatever order the table's
// physical layout gives, and a seed would not replay. The clock ticks 1 µs
// when needed; the model accepts ties all the same.
func (m *machine) Commit(t *rapid.T) {
	m.payable()
	if !m.m.Now.After(m.lastCommit) {
		m.advance(t, time.Microsecond)
	}
	m.lastCommit = m.m.Now
	p := m.newPayment()
	e := m.record("Commit", Actor{Role: Producer}, p.ID)
	var id string
	before := len(m.broker.Log)
	err := m.call(t, Actor{Role: Producer}, func(ctx context.Context) (err error) { id, err = m.subj.Commit(ctx, p, m.m.Now); return })
	m.finish(e, err, "event "+id)
	var ps []model.Problem
	m.m, ps = model.Commit(m.m, p.ID, id, m.outcome(err))
	m.report(t, ps)
	m.applyPublishes(t, before) // a producer that publishes itself (dual write)
}

// Rollback runs a producer transaction that writes and then rolls back.
func (m *machine) Rollback(t *rapid.T) {
	m.payable()
	p := m.newPayment()
	e := m.record("Rollback", Actor{Role: Producer}, p.ID)
	before := len(m.broker.Log)
	err := m.call(t, Actor{Role: Producer}, func(ctx context.Context) error { return m.subj.Rollback(ctx, p, m.m.Now) })
	m.finish(e, err, "rolled back")
	m.m = model.Rollback(m.m, p.ID)
	m.applyPublishes(t, before) // a producer that publishes itself (dual write)
}

// MaxPayments bounds the payments (commits and rollbacks) of one check.
// Every step reads back every row and effect and checks each against the
// model, so a check that kept adding events would cost more per step the
// longer it ran (a 14,000-step check held 1,900 rows). A long check goes
// deeper on a bounded set of events instead (the small-scope hypothesis:
// the outbox's bugs need a handful); a check of the default 30 steps makes
// about four.
const MaxPayments = 32

// payable skips a producer action once the check has made MaxPayments.
func (m *machine) payable() {
	if m.pays >= MaxPayments {
		skip("the check has made its payments")
	}
}

func (m *machine) newPayment() Payment {
	m.pays++
	return Payment{ID: fmt.Sprintf("pay-%d", m.pays), MerchantID: fmt.Sprintf("merchant-%d", m.pays%3), AmountCents: int64(100 * m.pays)}
}

// Claim has a dispatcher claim up to a few due events.
func (m *machine) Claim(t *rapid.T) {
	d := m.pickDispatcher(t, false)
	limit := rapid.IntRange(1, m.opts.MaxBatch).Draw(t, "limit")
	e := m.record("Claim", Actor{Role: Dispatcher, N: d}, fmt.Sprintf("limit %d", limit))
	got, err := m.claim(t, d, limit)
	var ids []string
	for _, c := range got {
		ids = append(ids, fmt.Sprintf("%s(claim %s, attempts %d)", c.ID, c.ClaimID, c.Attempts))
	}
	m.finish(e, err, "claimed ["+strings.Join(ids, " ")+"]")
	switch m.outcome(err) {
	case model.Unknown:
		m.m = model.ClaimUnknown(m.m)
		return
	case model.NotDone:
		return
	}
	m.applyClaim(t, limit, got)
	for _, c := range got {
		m.hold(d, c)
	}
}

// applyClaim checks a determinate claim result against the model.
func (m *machine) applyClaim(t *rapid.T, limit int, got []Claimed) {
	var ps []model.Problem
	m.m, ps = model.Claim(m.m, limit, modelClaims(got))
	m.report(t, ps)
}

// applyPublishes checks every message the broker accepted since index
// before against the model.
func (m *machine) applyPublishes(t *rapid.T, before int) {
	var ps []model.Problem
	for _, msg := range m.broker.Log[before:] {
		var p []model.Problem
		m.m, p = model.Publish(m.m, msg.ID, string(msg.Payload))
		ps = append(ps, p...)
	}
	m.report(t, ps)
}

// claim runs dispatcher d's claim and sorts what came back by event_id:
// RETURNING order is the executor's, not a contract, and the dispatchers'
// memories must not depend on it.
func (m *machine) claim(t *rapid.T, d, limit int) ([]Claimed, error) {
	var got []Claimed
	err := m.call(t, Actor{Role: Dispatcher, N: d}, func(ctx context.Context) (err error) { got, err = m.subj.Claim(ctx, d, m.m.Now, limit); return })
	slices.SortFunc(got, func(a, b Claimed) int { return strings.Compare(a.ID, b.ID) })
	return got, err
}

// hold puts c in dispatcher d's memory, replacing an older claim of its own.
func (m *machine) hold(d int, c Claimed) {
	for i, h := range m.held[d] {
		if h.c.ID == c.ID {
			m.held[d][i] = held{c: c}
			return
		}
	}
	m.held[d] = append(m.held[d], held{c: c})
}

// pickHeld draws a claim in the given state from any dispatcher that is up.
func (m *machine) pickHeld(t *rapid.T, st pubState) (d, i int) {
	type ref struct{ d, i int }
	var refs []ref
	for d := range m.held {
		for i, h := range m.held[d] {
			if h.state == st && !m.crashed[d] {
				refs = append(refs, ref{d, i})
			}
		}
	}
	if len(refs) == 0 {
		skip("no such claim held")
	}
	r := refs[rapid.IntRange(0, len(refs)-1).Draw(t, "claim")]
	return r.d, r.i
}

// Publish has a dispatcher publish one claimed event; rapid decides whether
// the broker accepts it.
func (m *machine) Publish(t *rapid.T) {
	d, i := m.pickHeld(t, unpublished)
	h := &m.held[d][i]
	m.drawBroker(t)
	e := m.record("Publish", Actor{Role: Dispatcher, N: d}, fmt.Sprintf("%s (claim %s)", h.c.ID, h.c.ClaimID))
	before := len(m.broker.Log)
	err := m.do(Actor{Role: Dispatcher, N: d}, func(ctx context.Context) error { return m.subj.Publish(ctx, d, h.c, m.broker) })
	m.published = h.c.ClaimID
	m.countBroker()
	m.finish(e, err, "acknowledged")
	m.applyPublishes(t, before)
	if err != nil {
		h.state, h.cause = refused, err
	} else {
		h.state = acked
	}
}

// countBroker adds the broker faults of the last publish to the summary.
func (m *machine) countBroker() {
	if m.broker.refuse {
		m.sum.Broker.Refused++
	}
	if m.broker.loseAck {
		m.sum.Broker.AckLost++
	}
	if m.broker.duplicate {
		m.sum.Broker.Duplicates++
	}
	m.broker.refuse, m.broker.loseAck, m.broker.duplicate = false, false, false
}

// MarkPublished has a dispatcher record an acknowledged publish.
func (m *machine) MarkPublished(t *rapid.T) {
	d, i := m.pickHeld(t, acked)
	c := m.held[d][i].c
	e := m.record("MarkPublished", Actor{Role: Dispatcher, N: d}, fmt.Sprintf("%s (claim %s)", c.ID, c.ClaimID))
	var changed bool
	err := m.call(t, Actor{Role: Dispatcher, N: d}, func(ctx context.Context) (err error) { changed, err = m.subj.MarkPublished(ctx, d, c, m.m.Now); return })
	m.finish(e, err, fmt.Sprintf("changed=%v", changed))
	m.drop(d, i)
	var ps []model.Problem
	m.m, ps = model.MarkPublished(m.m, c.ID, c.ClaimID, changed, m.outcome(err))
	m.report(t, ps)
}

// MarkFailed has a dispatcher record a refused publish.
func (m *machine) MarkFailed(t *rapid.T) {
	d, i := m.pickHeld(t, refused)
	c := m.held[d][i].c
	e := m.record("MarkFailed", Actor{Role: Dispatcher, N: d}, fmt.Sprintf("%s (claim %s, attempts %d)", c.ID, c.ClaimID, c.Attempts))
	var changed bool
	err := m.call(t, Actor{Role: Dispatcher, N: d}, func(ctx context.Context) (err error) {
		changed, err = m.subj.MarkFailed(ctx, d, c, m.m.Now, m.held[d][i].cause)
		return
	})
	m.finish(e, err, fmt.Sprintf("changed=%v", changed))
	m.drop(d, i)
	var ps []model.Problem
	m.m, ps = model.MarkFailed(m.m, c.ID, c.ClaimID, changed, m.outcome(err))
	m.report(t, ps)
}

func (m *machine) drop(d, i int) {
	m.held[d] = append(m.held[d][:i:i], m.held[d][i+1:]...)
}

// AdvanceClock moves the harness's time, around the edges or freely.
//
// For a subject with a rescuer, the rescuer may run as the clock moves,
// in the same step: a rescuer runs on a cadence, when time has passed,
// and a lease that ends, is rescued and is claimed again is then three
// steps, not four (a stale claimant's mark after them is the bug that
// fencing exists for, and each step between is a chance that it marks
// first). The draw is whether the rescuer stays idle, so that it
// shrinks toward running: a story then needs no extra clock step for the
// rescue alone (rapid lowers a value, it never raises one, so a rescue on
// a step of its own could not move onto the step that ended the lease).
func (m *machine) AdvanceClock(t *rapid.T) {
	dt := drawAdvance(t, m.m)
	rescue := m.opts.Semantics.Rescue != nil && !rapid.Bool().Draw(t, "the rescuer stays idle")
	input := "+" + dt.String()
	if rescue {
		input += ", then the rescuer runs"
	}
	e := m.record("AdvanceClock", Actor{Role: Operator}, input)
	m.advance(t, dt)
	if rescue {
		m.rescueIn(t, e)
	}
}

// CrashDispatcher kills a dispatcher: its session is cut and its memory of
// claims is gone.
func (m *machine) CrashDispatcher(t *rapid.T) {
	d := m.pickDispatcher(t, false)
	m.record("CrashDispatcher", Actor{Role: Dispatcher, N: d}, fmt.Sprintf("forgets %d claims", len(m.held[d])))
	m.crash(Actor{Role: Dispatcher, N: d})
	m.held[d], m.crashed[d] = nil, true
	m.sum.Crashes.Dispatcher++
}

// RestartDispatcher brings a crashed dispatcher back with an empty memory.
func (m *machine) RestartDispatcher(t *rapid.T) {
	d := m.pickDispatcher(t, true)
	m.record("Restart", Actor{Role: Dispatcher, N: d}, "")
	m.crashed[d] = false
}
