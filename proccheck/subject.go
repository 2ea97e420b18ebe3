package proccheck

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// Command is a subject in any language: the program and its arguments,
// to which each process's role is appended. It is started directly, not
// through a shell.
type Command struct {
	Argv []string
	Dir  string   // its working directory; "": the harness's
	Env  []string // KEY=VALUE added to the harness's environment
}

// Recovery is a process subject's declared recovery unless it says
// otherwise (loopcheck.Options.Recovery): the longest it may go without
// progress once everything is healed. Longer than a Go subject's 3 s: its
// relays start as processes again after every kill and at the drain, and
// on a loaded machine (a CI runner) a start takes seconds. It costs a
// passing run nothing: the judge stops waiting once everything is
// delivered.
const Recovery = 10 * time.Second

// New is the loop contract's constructor for the subject c: it starts
// the operator, which creates the subject's schema before its hello and
// names the optional capabilities it has; the producer, consumer and
// each relay start when first needed.
func New(c Command) loopcheck.NewSubject {
	return func(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
		if len(c.Argv) == 0 {
			return nil, errors.New("proccheck: no command")
		}
		s := &subject{cmd: c, env: env, relays: map[int]*child{}}
		op, err := s.spawn(ctx, "operator", harness.Actor{Role: harness.Operator}, nil)
		if err != nil {
			return nil, err
		}
		s.op.c = op
		if err := knownCapabilities(op); err != nil {
			s.Close()
			return nil, err
		}
		// The producer and the consumer start now too, not at their first
		// call: a process's start is slow on a loaded machine.
		for _, a := range []struct {
			actor *actor
			role  string
			who   harness.Actor
		}{{&s.prod, "producer", harness.Actor{Role: harness.Producer}}, {&s.cons, "consumer", harness.Actor{Role: harness.Consumer}}} {
			if a.actor.c, err = s.spawn(ctx, a.role, a.who, nil); err != nil {
				s.Close()
				return nil, err
			}
		}
		return s, nil
	}
}

// subject is a Command behind the loop contract.
type subject struct {
	cmd Command
	env loopcheck.Env
	ids atomic.Int64

	op, prod, cons actor

	mu     sync.Mutex
	relays map[int]*child // running relay processes, by dispatcher
}

// actor is a role with one process at a time, one request at a time.
type actor struct {
	mu sync.Mutex
	c  *child
}

var (
	_ loopcheck.SelfCommitter = (*subject)(nil)
	_ loopcheck.Announcer     = (*subject)(nil)
	_ loopcheck.Pender        = (*subject)(nil)
	_ loopcheck.DeadLetterer  = (*subject)(nil)
	_ loopcheck.Failpointer   = (*subject)(nil)
	_ loopcheck.Stopper       = (*subject)(nil)
	_ loopcheck.Pauser        = (*subject)(nil)
	_ loopcheck.OncePublisher = (*subject)(nil)
	_ loopcheck.Deduper       = (*subject)(nil)
	_ loopcheck.ClaimReporter = (*subject)(nil)
)

// spawn starts the process for role on actor a's link.
func (s *subject) spawn(ctx context.Context, role string, a harness.Actor, extra []string) (*child, error) {
	env := append(slices.Clone(s.cmd.Env),
		"OUTBOXCHECK_PROTOCOL="+Version,
		"OUTBOXCHECK_DATABASE_URL="+s.env.ConnString(a),
		"OUTBOXCHECK_LEASE_MS="+ms(s.env.Lease.Milliseconds()),
		"OUTBOXCHECK_BACKOFF_MS="+ms(s.env.BackoffBase.Milliseconds()),
		"OUTBOXCHECK_MAX_ATTEMPTS="+strconv.Itoa(s.env.MaxAttempts),
		"OUTBOXCHECK_DISPATCHERS="+strconv.Itoa(s.env.Dispatchers),
		"OUTBOXCHECK_RETRY_BUDGET_MS="+ms(s.env.RetryBudget.Milliseconds()))
	if s.env.DedupeWindow > 0 {
		env = append(env, "OUTBOXCHECK_DEDUPE_WINDOW_MS="+ms(s.env.DedupeWindow.Milliseconds()),
			"OUTBOXCHECK_WIRE_HOLD_MS="+ms(s.env.WireHold.Milliseconds()))
	}
	return spawn(ctx, s.cmd.Argv, s.cmd.Dir, append(env, extra...), role)
}

func ms(n int64) string { return strconv.FormatInt(n, 10) }

// Lacks: the operator's hello lists what the subject has.
func (s *subject) Lacks(iface any) bool {
	switch iface.(type) {
	case *loopcheck.Pender:
		return !s.has(s.op.c, "pending")
	case *loopcheck.DeadLetterer:
		return !s.has(s.op.c, "dead-letters")
	case *loopcheck.Failpointer:
		return !s.has(s.op.c, "failpoints")
	case *loopcheck.OncePublisher:
		return !s.has(s.op.c, "publishes-once")
	case *loopcheck.Deduper:
		return !s.has(s.op.c, "leans-on-dedupe")
	case *loopcheck.ClaimReporter:
		return !s.has(s.op.c, "claims")
	}
	return false
}

// PublishesOnce: the subject declares its claims exclude each other
// through a publish (its hello lists "publishes-once").
func (s *subject) PublishesOnce() bool { return s.has(s.op.c, "publishes-once") }

// LeansOnDedupe: the subject declares it leans on a real broker's
// deduplication window (its hello lists "leans-on-dedupe").
func (s *subject) LeansOnDedupe() bool { return s.has(s.op.c, "leans-on-dedupe") }

// ReportsClaims: the subject's relays report their claims and
// completions (its hello lists "claims").
func (s *subject) ReportsClaims() bool { return s.has(s.op.c, "claims") }

// capabilities are those a hello may list.
var capabilities = []string{"pending", "dead-letters", "failpoints", "publishes-once", "leans-on-dedupe", "claims"}

// knownCapabilities refuses a capability the protocol does not have: a
// misspelt one must not read as absent.
func knownCapabilities(c *child) error {
	for _, name := range c.hello.Capabilities {
		if !slices.Contains(capabilities, name) {
			return c.broke(fmt.Sprintf("its hello lists the capability %q, which protocol %s does not have (it has %s)", name, Version, strings.Join(capabilities, ", ")), "")
		}
	}
	return nil
}

func (s *subject) has(c *child, capability string) bool {
	return c != nil && slices.Contains(c.hello.Capabilities, capability)
}

// call sends req to a's process, starting it first if none runs, and
// waits for its reply; at is called for each failpoint the process
// announces. A call that does not end in a reply ends the process: one
// in doubt is never asked again.
func (s *subject) call(ctx context.Context, a *actor, role string, who harness.Actor, req request, at func(string) error) (reply, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.c == nil || !a.c.alive() {
		// The process's start is not the call's: it gets its own time to
		// say hello, and the call's deadline moves by what that took. A
		// slow start on a loaded machine must not time every call out.
		start := time.Now()
		c, err := s.spawn(context.WithoutCancel(ctx), role, who, nil)
		if err != nil {
			return reply{}, err
		}
		a.c = c
		if d, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(context.WithoutCancel(ctx), d.Add(time.Since(start)))
			defer cancel()
		}
	}
	c := a.c
	req.ID = s.ids.Add(1)
	rep, err := c.exchange(ctx, req, at)
	if err != nil {
		c.kill()
		a.c = nil
	}
	return rep, err
}

// exchange sends req and reads lines until its reply.
func (c *child) exchange(ctx context.Context, req request, at func(string) error) (reply, error) {
	if err := c.send(req); err != nil {
		return reply{}, c.broke("its stdin is closed: "+err.Error(), "")
	}
	for {
		line, err := c.next(ctx)
		if err != nil {
			return reply{}, err
		}
		var rep reply
		if err := jsonStrict(line, &rep); err != nil {
			return reply{}, c.broke("a line that is not a reply of the protocol ("+err.Error()+")", string(line))
		}
		if rep.Failpoint != "" {
			if at == nil {
				return reply{}, c.broke("a failpoint announced where none was asked for", string(line))
			}
			if err := at(rep.Failpoint); err != nil {
				return reply{}, err
			}
			if err := c.send(continuation{Continue: true}); err != nil {
				return reply{}, c.broke("its stdin is closed: "+err.Error(), "")
			}
			continue
		}
		if rep.ID == nil || *rep.ID != req.ID {
			return reply{}, c.broke(fmt.Sprintf("a reply to no request (want id %d)", req.ID), string(line))
		}
		if !rep.OK {
			if rep.Error == "" {
				rep.Error = "failed, saying nothing"
			}
			return rep, fmt.Errorf("%s: %s", req.Op, rep.Error)
		}
		return rep, nil
	}
}

func (s *subject) operator(ctx context.Context, op string) (reply, error) {
	return s.call(ctx, &s.op, "operator", harness.Actor{Role: harness.Operator}, request{Op: op}, nil)
}

func (s *subject) Reset(ctx context.Context) error {
	_, err := s.operator(ctx, "reset")
	return err
}

func (s *subject) Effects(ctx context.Context) (map[string]int, error) {
	rep, err := s.operator(ctx, "effects")
	if rep.Effects == nil {
		rep.Effects = map[string]int{}
	}
	return rep.Effects, err
}

func (s *subject) Pending(ctx context.Context) ([]string, error) {
	rep, err := s.operator(ctx, "pending")
	return rep.Payments, err
}

func (s *subject) DeadLetters(ctx context.Context) ([]string, error) {
	rep, err := s.operator(ctx, "dead-letters")
	return rep.Payments, err
}

// Enqueue is never called: the producer commits its own transactions
// (Produce).
func (s *subject) Enqueue(context.Context, pgx.Tx, harness.Payment) error {
	return errors.New("proccheck: the producer process commits its own transactions (Produce)")
}

func (s *subject) Produce(ctx context.Context, ps []harness.Payment, commit bool) error {
	_, err := s.call(ctx, &s.prod, "producer", harness.Actor{Role: harness.Producer}, request{Op: "produce", Payments: WirePayments(ps), Commit: commit}, nil)
	return err
}

func (s *subject) Handle(ctx context.Context, m harness.Message) error {
	_, err := s.call(ctx, &s.cons, "consumer", harness.Actor{Role: harness.Consumer}, request{Op: "handle", Message: WireMessage(m)}, nil)
	return err
}

// HandleAt asks the consumer to announce its failpoints; where fp says
// crash, the consumer's process group is killed there (SIGKILL).
func (s *subject) HandleAt(ctx context.Context, m harness.Message, fp harness.Failpoints) error {
	at := func(name string) error { return fp(harness.Failpoint(name)) }
	_, err := s.call(ctx, &s.cons, "consumer", harness.Actor{Role: harness.Consumer}, request{Op: "handle", Message: WireMessage(m), Failpoints: true}, at)
	return err
}

// Close ends every process.
func (s *subject) Close() error {
	for _, a := range []*actor{&s.op, &s.prod, &s.cons} {
		a.mu.Lock()
		if a.c != nil {
			a.c.kill()
			a.c = nil
		}
		a.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, c := range s.relays {
		c.kill()
		delete(s.relays, i)
	}
	return nil
}
