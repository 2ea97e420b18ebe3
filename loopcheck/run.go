package loopcheck

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/properties"
)

// Options tune a run.
type Options struct {
	DatabaseURL string // a database the tool created (see properties.Options)
	Dispatchers int    // default 2
	// Lease, BackoffBase, MaxAttempts: given to the subject. Defaults
	// 300 ms, 20 ms, 20.
	Lease       time.Duration
	BackoffBase time.Duration
	MaxAttempts int
	// Quiesce bounds the wait, after healing, for every committed payment
	// to take effect. Default 20 s.
	Quiesce time.Duration
	// CallTimeout bounds each harness call. Default 2 s.
	CallTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.Dispatchers == 0 {
		o.Dispatchers = 2
	}
	if o.Lease == 0 {
		o.Lease = 300 * time.Millisecond
	}
	if o.BackoffBase == 0 {
		o.BackoffBase = 20 * time.Millisecond
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = 20
	}
	if o.Quiesce == 0 {
		o.Quiesce = 20 * time.Second
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = 2 * time.Second
	}
	return o
}

// Result is what a run found.
type Result struct {
	Checks   int
	Failure  *properties.Failure // nil when every schedule passed
	Schedule Schedule            // the failing schedule, shrunk as far as rapid could
}

// runner is one run: the subject, its links and the broker.
type runner struct {
	opts  Options
	base  *url.URL
	net   *faults.Net
	subj  Subject
	links []string
	env   Env
}

// Run checks the subject with schedules drawn by rapid.
func Run(tb rapid.TB, newSubject NewSubject, opts Options) Result {
	tb.Helper()
	r, err := open(newSubject, opts.withDefaults())
	if err != nil {
		tb.Fatalf("infrastructure error: %v", err)
		return Result{Failure: &properties.Failure{Infrastructure: true, Message: err.Error()}}
	}
	defer r.close()
	var res Result
	rapid.Check(tb, func(t *rapid.T) {
		res.Checks++
		s := draw(t, r.links, r.opts.Dispatchers)
		f, err := r.run(s)
		switch {
		case err != nil:
			res.Failure, res.Schedule = &properties.Failure{Infrastructure: true, Message: err.Error()}, s
			t.Fatalf("infrastructure error: %v", err)
		case f != nil:
			// On real time the details differ from run to run: rapid sees
			// one failure per property (see properties' machine.report).
			t.Logf("property violated: %s: %s\ncounterexample: %d steps\n%s", f.Property, f.Message, len(f.History.Entries), f.History.Story())
			if res.Failure != nil && res.Failure.Property != f.Property {
				t.Fatalf("property violated: %s (shrinking a failure of %q: not the same failure)", f.Property, res.Failure.Property)
			}
			res.Failure, res.Schedule = f, s
			t.Fatalf("property violated: %s", f.Property)
		}
	})
	return res
}

// Replay runs schedule s n times and counts the runs that fail with the
// same property: real time does not replay exactly.
func Replay(newSubject NewSubject, opts Options, s Schedule, property string, n int) (reproduced int, err error) {
	r, err := open(newSubject, opts.withDefaults())
	if err != nil {
		return 0, err
	}
	defer r.close()
	for range n {
		f, err := r.run(s)
		if err != nil {
			return reproduced, err
		}
		if f != nil && f.Property == property {
			reproduced++
		}
	}
	return reproduced, nil
}

func open(newSubject NewSubject, opts Options) (*runner, error) {
	base, err := url.Parse(opts.DatabaseURL)
	if err != nil || (base.Scheme != "postgres" && base.Scheme != "postgresql") {
		return nil, errors.New("loopcheck: DatabaseURL must be a postgres:// URL")
	}
	r := &runner{opts: opts, base: base, net: faults.NewNet(base.Host)}
	r.links = []string{properties.Actor{Role: properties.Producer}.String(), properties.Actor{Role: properties.Consumer}.String()}
	for i := range opts.Dispatchers {
		r.links = append(r.links, properties.Actor{Role: properties.Dispatcher, N: i}.String())
	}
	var (
		mu      sync.Mutex
		linkErr error
	)
	r.env = Env{
		ConnString: func(a properties.Actor) string { // called from the subject's goroutines
			s, err := r.connString(a)
			mu.Lock()
			linkErr = errors.Join(linkErr, err)
			mu.Unlock()
			return s
		},
		Lease: opts.Lease, BackoffBase: opts.BackoffBase, MaxAttempts: opts.MaxAttempts, Dispatchers: opts.Dispatchers,
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	subj, err := newSubject(ctx, r.env)
	mu.Lock()
	err = errors.Join(err, linkErr)
	mu.Unlock()
	if err != nil {
		if subj != nil {
			subj.Close()
		}
		r.net.Close()
		return nil, fmt.Errorf("build subject: %w", err)
	}
	r.subj = subj
	return r, nil
}

func (r *runner) connString(a properties.Actor) (string, error) {
	u := *r.base
	if a.Role != properties.Operator {
		addr, err := r.net.Link(a.String())
		if err != nil {
			return "", err
		}
		u.Host = addr
	}
	q := u.Query()
	q.Set("application_name", "outboxcheck-loop-"+a.String())
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func (r *runner) close() {
	r.subj.Close()
	r.net.Close()
}

// check is one schedule's run.
type check struct {
	*runner
	ctx    context.Context
	bro    broker
	hist   properties.History
	start  time.Time
	paid   map[string]bool // committed payments
	maybe  map[string]bool // commits whose outcome is unknown
	voided map[string]bool // rolled back
	pays   int

	handling  sync.Mutex
	mu        sync.Mutex
	acked     map[string]bool // event_id → a delivery was acknowledged
	delivered []properties.Message

	loops  []context.CancelFunc
	loopWG []*sync.WaitGroup
	stopC  context.CancelFunc
	consWG sync.WaitGroup
	prod   *pgx.Conn
}

func (r *runner) run(s Schedule) (f *properties.Failure, err error) {
	c := &check{runner: r, ctx: context.Background(), start: time.Now(), paid: map[string]bool{}, maybe: map[string]bool{},
		voided: map[string]bool{}, acked: map[string]bool{}, loops: make([]context.CancelFunc, r.opts.Dispatchers),
		loopWG: make([]*sync.WaitGroup, r.opts.Dispatchers)}
	for _, l := range r.links {
		r.net.Heal(l)
	}
	if err := c.call(r.subj.Reset); err != nil {
		return nil, fmt.Errorf("reset: %w", err)
	}
	defer c.shutdown()
	for i := range r.opts.Dispatchers {
		c.startLoop(i)
	}
	c.startConsumer()
	for _, st := range s {
		c.step(st)
		if f := c.atMostOnce(); f != nil {
			return f, nil
		}
	}
	c.record("Heal", "operator", "heal every link, broker up, restart every dispatcher; wait for quiescence", "")
	for _, l := range r.links {
		r.net.Heal(l)
	}
	c.bro.setDown(false)
	for i := range r.opts.Dispatchers {
		if c.loops[i] == nil {
			c.startLoop(i)
		}
	}
	return c.quiesce()
}

func (c *check) call(fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.CallTimeout)
	defer cancel()
	return fn(ctx)
}

func (c *check) record(action, actor, input, result string) {
	c.hist.Entries = append(c.hist.Entries, properties.Entry{Step: len(c.hist.Entries) + 1,
		Clock: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Since(c.start)), Action: action, Actor: actor, Input: input, Result: result})
}

func (c *check) fail(property, msg string) *properties.Failure {
	if n := len(c.hist.Entries); n > 0 {
		c.hist.Entries[n-1].Expect = "[" + property + "] " + msg
	}
	h := c.hist
	return &properties.Failure{Property: property, Message: msg, History: &h}
}

func (c *check) startLoop(i int) {
	ctx, cancel := context.WithCancel(c.ctx)
	wg := &sync.WaitGroup{}
	wg.Go(func() { _ = c.subj.Dispatch(ctx, i, &c.bro) })
	c.loops[i], c.loopWG[i] = cancel, wg
}

// killLoop stops dispatcher i abruptly: its loop is cancelled and its
// link cut, so whatever it had in flight dies with its sessions.
func (c *check) killLoop(i int) {
	if c.loops[i] == nil {
		return
	}
	c.loops[i]()
	_ = c.net.Cut(properties.Actor{Role: properties.Dispatcher, N: i}.String())
	c.loopWG[i].Wait()
	c.loops[i] = nil
}

// startConsumer delivers every message the broker accepted, in order, to
// the subject's consumer until it acknowledges.
func (c *check) startConsumer() {
	ctx, cancel := context.WithCancel(c.ctx)
	c.stopC = cancel
	c.consWG.Go(func() {
		next := 0
		for ctx.Err() == nil {
			msgs := c.bro.messages()
			if next >= len(msgs) {
				select {
				case <-ctx.Done():
				case <-time.After(5 * time.Millisecond):
				}
				continue
			}
			m := msgs[next]
			if c.deliver(ctx, m) == nil {
				next++
			} else {
				select { // its link may be partitioned: try again shortly
				case <-ctx.Done():
				case <-time.After(20 * time.Millisecond):
				}
			}
		}
	})
}

// deliver hands m to the consumer, one delivery at a time (the contract
// does not ask Handle to be safe for concurrent use).
func (c *check) deliver(ctx context.Context, m properties.Message) error {
	c.handling.Lock()
	defer c.handling.Unlock()
	cctx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
	err := c.subj.Handle(cctx, m)
	cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.delivered = append(c.delivered, m)
	if err == nil {
		c.acked[m.ID] = true
	}
	return err
}

func (c *check) shutdown() {
	for i := range c.loops {
		c.killLoop(i)
	}
	if c.stopC != nil {
		c.stopC()
		c.consWG.Wait()
	}
	if c.prod != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c.prod.Close(ctx)
		cancel()
	}
}

func (c *check) step(st Step) {
	switch st.Kind {
	case "commit", "rollback":
		n := max(st.N, 1)
		for range n {
			c.produce(st.Kind == "commit")
		}
		return
	case "partition":
		if err := c.net.Inject(st.Link, faults.Fault{Kind: st.Fault, After: st.After, DelayMs: 20}); err != nil {
			c.record("Partition", st.Link, st.String(), "error: "+err.Error())
			return
		}
		c.record("Partition", st.Link, fmt.Sprintf("%s after %d requests", st.Fault, st.After), "")
	case "heal":
		c.net.Heal(st.Link)
		c.record("Heal", st.Link, "", "")
	case "kill":
		c.killLoop(st.N)
		c.record("CrashDispatcher", fmt.Sprintf("dispatcher-%d", st.N), "loop cancelled, link cut", "")
	case "restart":
		if c.loops[st.N] == nil {
			c.startLoop(st.N)
		}
		c.record("Restart", fmt.Sprintf("dispatcher-%d", st.N), "", "")
	case "broker-down", "broker-up":
		c.bro.setDown(st.Kind == "broker-down")
		c.record(map[bool]string{true: "BrokerDown", false: "BrokerUp"}[st.Kind == "broker-down"], "broker", "", "")
	case "redeliver":
		msgs := c.bro.messages()
		if len(msgs) == 0 {
			return
		}
		m := msgs[st.N%len(msgs)]
		err := c.deliver(c.ctx, m)
		c.record("Deliver", "consumer", "again: "+m.ID, result(err, "acknowledged"))
	case "pause":
		time.Sleep(st.Pause)
		c.record("Pause", "operator", st.Pause.String(), "")
	}
}

func result(err error, ok string) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return ok
}

// produce writes one payment in a transaction of the harness's own,
// through the producer's link, and commits or rolls it back.
func (c *check) produce(commit bool) {
	c.pays++
	p := properties.Payment{ID: fmt.Sprintf("pay-%d", c.pays), MerchantID: fmt.Sprintf("m-%d", c.pays%3), AmountCents: int64(100 * c.pays)}
	action := map[bool]string{true: "Commit", false: "Rollback"}[commit]
	err := c.call(func(ctx context.Context) error {
		if c.prod == nil || c.prod.IsClosed() {
			conn, err := pgx.Connect(ctx, c.env.ConnString(properties.Actor{Role: properties.Producer}))
			if err != nil {
				return err
			}
			c.prod = conn
		}
		tx, err := c.prod.Begin(ctx)
		if err != nil {
			return err
		}
		if err := c.subj.Enqueue(ctx, tx, p); err != nil {
			tx.Rollback(ctx)
			return err
		}
		if !commit {
			return tx.Rollback(ctx)
		}
		if err := tx.Commit(ctx); err != nil {
			return errCommit{err}
		}
		return nil
	})
	var ce errCommit
	switch {
	case !commit:
		c.voided[p.ID] = true // a failed ROLLBACK changes nothing either
	case err == nil:
		c.paid[p.ID] = true
	case errors.As(err, &ce):
		c.maybe[p.ID] = true // the COMMIT went out: it may have committed
	}
	if err != nil && c.prod != nil {
		_ = c.prod.PgConn().Conn().Close() // never reuse a connection in doubt
	}
	c.record(action, "producer", p.ID, result(err, "ok"))
}

type errCommit struct{ error }

func (e errCommit) Unwrap() error { return e.error }

// atMostOnce: no event_id may take effect twice, at any moment.
func (c *check) atMostOnce() *properties.Failure {
	var fx map[string]int
	if err := c.call(func(ctx context.Context) (err error) { fx, err = c.subj.Effects(ctx); return }); err != nil {
		return nil // the operator's read failed: nothing is concluded from it
	}
	for _, id := range slices.Sorted(maps.Keys(fx)) {
		if fx[id] > 1 {
			return c.fail("effect-at-most-once", fmt.Sprintf("event %s took effect %d times", id, fx[id]))
		}
	}
	return nil
}

// quiesce waits, bounded, until every committed payment took effect, then
// judges the end state.
func (c *check) quiesce() (*properties.Failure, error) {
	deadline := time.Now().Add(c.opts.Quiesce)
	for {
		f, done, err := c.judge()
		if err != nil && time.Now().After(deadline) {
			return nil, fmt.Errorf("read effects after healing: %w", err)
		}
		if err == nil && (f != nil && f.Property != "no-loss" || done) {
			return f, nil
		}
		if time.Now().After(deadline) {
			return f, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// judge checks the end state; done says nothing is missing any more.
func (c *check) judge() (*properties.Failure, bool, error) {
	var fx map[string]int
	if err := c.call(func(ctx context.Context) (err error) { fx, err = c.subj.Effects(ctx); return }); err != nil {
		return nil, false, err
	}
	payOf := map[string]string{}
	for _, m := range c.bro.messages() {
		payOf[m.ID] = m.AggregateID
	}
	perPay := map[string]int{}
	for _, id := range slices.Sorted(maps.Keys(fx)) {
		n := fx[id]
		if n > 1 {
			return c.fail("effect-at-most-once", fmt.Sprintf("event %s took effect %d times", id, n)), true, nil
		}
		pay, ok := payOf[id]
		if !ok {
			return c.fail("no-phantom", fmt.Sprintf("event %s took effect but the broker never carried it", id)), true, nil
		}
		perPay[pay] += n
	}
	for _, m := range c.bro.messages() {
		if c.voided[m.AggregateID] {
			return c.fail("no-phantom", fmt.Sprintf("the broker carries event %s of payment %s, whose transaction rolled back", m.ID, m.AggregateID)), true, nil
		}
	}
	for _, pay := range slices.Sorted(maps.Keys(perPay)) {
		if perPay[pay] > 1 {
			return c.fail("effect-exactly-once", fmt.Sprintf("payment %s took effect %d times", pay, perPay[pay])), true, nil
		}
	}
	var missing []string
	for _, pay := range slices.Sorted(maps.Keys(c.paid)) {
		if perPay[pay] == 0 {
			missing = append(missing, pay)
		}
	}
	if len(missing) > 0 {
		return c.fail("no-loss", fmt.Sprintf("committed, never took effect after healing and %v: %s", c.opts.Quiesce, strings.Join(missing, ", "))), false, nil
	}
	return nil, true, nil
}
