// Package serve runs a loop-contract subject written in Go as a process
// subject: the child side of protocol outboxcheck/1 (docs/process-subjects.md).
// A Go program whose main calls Main with its subject's constructor is a
// command proccheck can run, role by role, with real SIGKILL, SIGTERM and
// SIGSTOP. It is the protocol's reference implementation, and how the
// reference relay runs as a process (examples/refprocess).
package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/proccheck"
)

// callTimeout bounds each request's database work, as the harness's own
// deadline (which kills the process) would otherwise be the only one.
const callTimeout = 5 * time.Second

// Main runs the role named by the last argument and exits.
func Main(newSubject loopcheck.NewSubject) {
	role := os.Args[len(os.Args)-1]
	if err := Run(context.Background(), newSubject, role, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", role, err)
		os.Exit(1)
	}
}

// Run serves role on in and out until in ends (or, for a relay, until
// its loop returns).
func Run(ctx context.Context, newSubject loopcheck.NewSubject, role string, in io.Reader, out io.Writer) error {
	s := &server{newSubject: newSubject, env: env(), out: out, lines: make(chan []byte, 16)}
	go s.read(in)
	switch role {
	case "operator":
		return s.operator(ctx)
	case "producer":
		return s.serve(ctx, "producer", s.produce)
	case "consumer":
		return s.serve(ctx, "consumer", s.handle)
	case "relay":
		return s.relay(ctx)
	}
	return fmt.Errorf("unknown role %q", role)
}

type server struct {
	newSubject loopcheck.NewSubject
	env        loopcheck.Env
	subj       loopcheck.Subject
	conn       *pgx.Conn // the producer's

	wmu   sync.Mutex
	out   io.Writer
	lines chan []byte // nil-closed at EOF

	pmu     sync.Mutex
	waiting map[int64]chan answer // a relay's publishes in flight
}

// env is the loop contract's Env from the OUTBOXCHECK_* variables: every
// actor's link is this process's own.
func env() loopcheck.Env {
	url := os.Getenv("OUTBOXCHECK_DATABASE_URL")
	ms := func(k string) time.Duration {
		n, _ := strconv.Atoi(os.Getenv(k))
		return time.Duration(n) * time.Millisecond
	}
	n := func(k string) int { v, _ := strconv.Atoi(os.Getenv(k)); return v }
	return loopcheck.Env{ConnString: func(harness.Actor) string { return url }, Lease: ms("OUTBOXCHECK_LEASE_MS"),
		BackoffBase: ms("OUTBOXCHECK_BACKOFF_MS"), MaxAttempts: n("OUTBOXCHECK_MAX_ATTEMPTS"), Dispatchers: n("OUTBOXCHECK_DISPATCHERS"),
		RetryBudget: ms("OUTBOXCHECK_RETRY_BUDGET_MS"), DedupeWindow: ms("OUTBOXCHECK_DEDUPE_WINDOW_MS"), WireHold: ms("OUTBOXCHECK_WIRE_HOLD_MS")}
}

func (s *server) say(v any) {
	b, _ := json.Marshal(v)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, _ = s.out.Write(append(b, '\n'))
}

func (s *server) read(in io.Reader) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		s.lines <- append([]byte(nil), sc.Bytes()...)
	}
	close(s.lines)
}

// subject builds the subject on first use: a process on a faulted link
// may not reach the database at once, and must say hello all the same.
func (s *server) subject(ctx context.Context) (loopcheck.Subject, error) {
	if s.subj == nil {
		subj, err := s.newSubject(ctx, s.env)
		if err != nil {
			if subj != nil {
				subj.Close()
			}
			return nil, err
		}
		s.subj = subj
	}
	return s.subj, nil
}

type request struct {
	ID         int64               `json:"id"`
	Op         string              `json:"op"`
	Payments   []harness.Payment   `json:"-"`
	Wire       []proccheck.Payment `json:"payments"`
	Commit     bool                `json:"commit"`
	Message    *proccheck.Message  `json:"message"`
	Failpoints bool                `json:"failpoints"`
	Continue   bool                `json:"continue"`
}

type reply struct {
	ID       int64          `json:"id"`
	OK       bool           `json:"ok"`
	Error    string         `json:"error,omitempty"`
	Effects  map[string]int `json:"effects,omitempty"`
	Payments []string       `json:"payments,omitempty"`
}

// next is the next request; ok false at EOF.
func (s *server) next() (request, bool, error) {
	line, ok := <-s.lines
	if !ok {
		return request{}, false, nil
	}
	var r request
	if err := json.Unmarshal(line, &r); err != nil {
		return r, false, fmt.Errorf("bad line %q: %w", line, err)
	}
	for _, p := range r.Wire {
		r.Payments = append(r.Payments, p.Harness())
	}
	return r, true, nil
}

// serve answers requests with fn, one at a time, after its hello.
func (s *server) serve(ctx context.Context, role string, fn func(context.Context, request) reply) error {
	s.say(map[string]any{"hello": "outboxcheck/1", "role": role})
	for {
		r, ok, err := s.next()
		if !ok {
			return err
		}
		rep := fn(ctx, r)
		rep.ID = r.ID
		s.say(rep)
	}
}

func fail(err error) reply { return reply{Error: err.Error()} }

func (s *server) operator(ctx context.Context) error {
	subj, err := s.subject(ctx) // the schema, before the hello
	if err != nil {
		return err
	}
	var caps []string
	if _, ok := subj.(loopcheck.Pender); ok {
		caps = append(caps, "pending")
	}
	if _, ok := subj.(loopcheck.DeadLetterer); ok {
		caps = append(caps, "dead-letters")
	}
	if _, ok := subj.(loopcheck.Failpointer); ok {
		caps = append(caps, "failpoints")
	}
	if op, ok := subj.(loopcheck.OncePublisher); ok && op.PublishesOnce() {
		caps = append(caps, "publishes-once")
	}
	if d, ok := subj.(loopcheck.Deduper); ok && d.LeansOnDedupe() {
		caps = append(caps, "leans-on-dedupe")
	}
	if cr, ok := subj.(loopcheck.ClaimReporter); ok && cr.ReportsClaims() {
		caps = append(caps, "claims")
	}
	s.say(map[string]any{"hello": "outboxcheck/1", "role": "operator", "capabilities": caps})
	for {
		r, ok, err := s.next()
		if !ok {
			return err
		}
		rep := reply{OK: true}
		bound := callTimeout
		if r.Op == "reset" {
			bound = loopcheck.ResetTimeout // the harness waits that long for it
		}
		ctx, cancel := context.WithTimeout(ctx, bound)
		switch r.Op {
		case "reset":
			err = subj.Reset(ctx)
		case "effects":
			rep.Effects, err = subj.Effects(ctx)
		case "pending":
			rep.Payments, err = subj.(loopcheck.Pender).Pending(ctx)
		case "dead-letters":
			rep.Payments, err = subj.(loopcheck.DeadLetterer).DeadLetters(ctx)
		default:
			err = fmt.Errorf("unknown op %q", r.Op)
		}
		cancel()
		if err != nil {
			rep = fail(err)
		}
		rep.ID = r.ID
		s.say(rep)
	}
}

// produce writes r's payments in one transaction and commits or rolls it
// back; any error drops the connection.
func (s *server) produce(ctx context.Context, r request) reply {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	err := func() error {
		subj, err := s.subject(ctx)
		if err != nil {
			return err
		}
		if s.conn == nil {
			if s.conn, err = pgx.Connect(ctx, s.env.ConnString(harness.Actor{Role: harness.Producer})); err != nil {
				return err
			}
		}
		tx, err := s.conn.Begin(ctx)
		if err != nil {
			return err
		}
		for _, p := range r.Payments {
			if err := subj.Enqueue(ctx, tx, p); err != nil {
				_ = tx.Rollback(ctx)
				return err
			}
		}
		if !r.Commit {
			return tx.Rollback(ctx)
		}
		return tx.Commit(ctx)
	}()
	if err != nil {
		if s.conn != nil {
			_ = s.conn.PgConn().Conn().Close()
			s.conn = nil
		}
		return fail(err)
	}
	return reply{OK: true}
}

// handle delivers r's message, announcing failpoints if asked.
func (s *server) handle(ctx context.Context, r request) reply {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	subj, err := s.subject(ctx)
	if err != nil {
		return fail(err)
	}
	if r.Message == nil {
		return fail(errors.New("a handle request without a message"))
	}
	hm := r.Message.Harness()
	if fp, ok := subj.(loopcheck.Failpointer); ok && r.Failpoints {
		err = fp.HandleAt(ctx, hm, func(p harness.Failpoint) error {
			s.say(map[string]string{"failpoint": string(p)})
			if c, ok, _ := s.next(); !ok || !c.Continue {
				os.Exit(1) // the harness is gone, or says stop: as a crash
			}
			return nil
		})
	} else {
		err = subj.Handle(ctx, hm)
	}
	if err != nil {
		return fail(err)
	}
	return reply{OK: true}
}

// answer is the harness's answer to a publish.
type answer struct {
	ID     int64  `json:"id"`
	Result string `json:"result"`
	Error  string `json:"error"`
}

// relay runs dispatcher OUTBOXCHECK_RELAY's loop until SIGTERM (the
// subject's own Stop, if it has one, else its context cancelled) or
// until the loop returns.
func (s *server) relay(ctx context.Context) error {
	i, _ := strconv.Atoi(os.Getenv("OUTBOXCHECK_RELAY"))
	s.say(map[string]any{"hello": "outboxcheck/1", "role": "relay"})
	s.waiting = map[int64]chan answer{}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.answers(cancel)
	var subj loopcheck.Subject
	for {
		var err error
		if subj, err = s.subject(ctx); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond): // a faulted link: try again
		}
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() {
		<-term
		if st, ok := subj.(loopcheck.Stopper); ok && st.Stop(context.Background(), i) == nil {
			return
		}
		cancel()
	}()
	return subj.Dispatch(ctx, i, &publisher{s: s})
}

// answers hands the harness's answers to the publishes waiting for them;
// stdin's end cancels the relay.
func (s *server) answers(cancel context.CancelFunc) {
	for line := range s.lines {
		var a answer
		if json.Unmarshal(line, &a) != nil {
			continue
		}
		s.pmu.Lock()
		ch := s.waiting[a.ID]
		delete(s.waiting, a.ID)
		s.pmu.Unlock()
		if ch != nil {
			ch <- a
		}
	}
	cancel()
}

// publisher publishes through the harness: a line, then its answer.
type publisher struct {
	s   *server
	ids int64
	mu  sync.Mutex
}

func (p *publisher) Publish(ctx context.Context, m harness.Message) error {
	p.mu.Lock()
	p.ids++
	id := p.ids
	p.mu.Unlock()
	ch := make(chan answer, 1)
	p.s.pmu.Lock()
	p.s.waiting[id] = ch
	p.s.pmu.Unlock()
	p.s.say(map[string]any{"op": "publish", "id": id, "message": proccheck.WireMessage(m)})
	select {
	case a := <-ch:
		switch a.Result {
		case "accepted":
			return nil
		case "refused":
			return fmt.Errorf("%w: %s", harness.ErrRefused, a.Error)
		}
		return errors.New(a.Error)
	case <-ctx.Done():
		p.s.pmu.Lock()
		delete(p.s.waiting, id)
		p.s.pmu.Unlock()
		p.s.say(map[string]any{"op": "abandon", "id": id})
		return ctx.Err()
	}
}

// Claimed reports a claim of the served relay's (loopcheck.ClaimLog).
func (p *publisher) Claimed(event, claim, over string) {
	line := map[string]any{"op": "claimed", "event": event, "claim": claim}
	if over != "" {
		line["over"] = over
	}
	p.s.say(line)
}

// Completed reports a completion of the served relay's.
func (p *publisher) Completed(event, claim string, changed bool) {
	p.s.say(map[string]any{"op": "completed", "event": event, "claim": claim, "changed": changed})
}

var _ loopcheck.ClaimLog = (*publisher)(nil)
