// Package refloop puts the reference implementation behind the loop
// contract (loopcheck): the producer writes in the caller's transaction
// (and notifies), each dispatcher runs impl.Loop on real time, optionally
// woken by LISTEN/NOTIFY, and the consumer is impl's.
package refloop

import (
	"context"
	"errors"
	"maps"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/impl"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// Options choose the variant.
type Options struct {
	Notify bool // LISTEN/NOTIFY wake-ups besides the scan
	NoScan bool // wake on notifications only: the notify-only bug
	// Rescan, if set, is a fixed cadence: the loop scans every Rescan
	// (or when notified) and ignores when the next attempt is due, as job
	// queues' rescuers do. Slow but correct.
	Rescan time.Duration
	// Queries, if set, edits the dispatcher's SQL: a loop mutant made from
	// a step-contract mutant's queries.
	Queries func(*impl.Queries)
	// Step, if set, is the dispatcher's batch: a loop mutant's own
	// (impl.Loop.Step), built on the reference dispatcher.
	Step func(d *impl.Dispatcher) func(ctx context.Context, limit int) (int, []error)
	// AckDeadline, if set, is a variant's own deadline for one publish's
	// ack, declared to the nemesis (Deadlines).
	AckDeadline time.Duration
	// ReportClaims: the relays report their claims and completions to
	// the harness (loopcheck.ClaimReporter: fencing is judged). Not with
	// Step, nor with a claim query edited past the seed's shape.
	ReportClaims bool
}

// callTimeout is the reference loop's bound on a batch and on each
// database call (impl.Loop's default).
const callTimeout = 2 * time.Second

// SlowRescan is the reference loop rescanning only every 30 s, woken by
// notifications for new events: correct, but a retry or an expired lease
// waits up to 30 s. Its loop contract run declares SlowRescanRecovery.
func SlowRescan(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	return Build(ctx, env, Options{Notify: true, Rescan: 30 * time.Second})
}

// Recovery is what the reference loop declares as its recovery time
// (loopcheck.Options.Recovery): its longest sleep (200 ms), a lease
// (300 ms at loopcheck's default) and its longest backoff (16 × 20 ms),
// with a margin.
const Recovery = 1500 * time.Millisecond

// SlowRescanRecovery is what SlowRescan declares as its recovery time
// (loopcheck.Options.Recovery): its 30 s cadence, plus a first scan
// after a restart that timed out (its 2 s call timeout: on a loaded
// runner a claim can take that long, and the next scan is a cadence
// later), a lease and a margin. 32 s, cadence and margin only, failed
// CI's -race run once: 13 payments pending 32.2 s after healing.
const SlowRescanRecovery = 40 * time.Second

// New is the reference loop with LISTEN/NOTIFY wake-ups, reporting its
// claims and completions.
func New(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	return Build(ctx, env, Options{Notify: true, ReportClaims: true})
}

// NotifyOnly is the mutant: a relay that sleeps until notified and never
// scans. A notification lost while it was down, a failed publish's retry
// and an expired lease are never notified, so those events wait forever.
func NotifyOnly(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	return Build(ctx, env, Options{Notify: true, NoScan: true})
}

// Subject is the reference loop behind the loop contract.
type Subject struct {
	env      loopcheck.Env
	opts     Options
	ids      impl.SequentialIDs
	producer impl.Producer
	consumer *impl.Consumer
	admin    *impl.Session
	// over is the claim query that reports what each claim took over
	// (overClaim), if the relays report their claims.
	over string
}

// Build builds the subject with opts and creates its schema.
func Build(ctx context.Context, env loopcheck.Env, opts Options) (*Subject, error) {
	s := &Subject{env: env, opts: opts}
	if opts.ReportClaims {
		if opts.Step != nil {
			return nil, errors.New("refloop: ReportClaims reports the reference batch's claims, not a Step's")
		}
		var err error
		if s.over, err = overClaim(s.queries().Claim); err != nil {
			return nil, err
		}
	}
	s.producer = impl.Producer{IDs: &s.ids}
	cons, err := impl.NewSession(env.ConnString(harness.Actor{Role: harness.Consumer}))
	if err != nil {
		return nil, err
	}
	s.consumer = &impl.Consumer{Session: cons}
	if s.admin, err = impl.NewSession(env.ConnString(harness.Actor{Role: harness.Operator})); err != nil {
		return nil, err
	}
	conn, err := s.admin.Conn(ctx)
	if err != nil {
		return s, err
	}
	return s, impl.Migrate(ctx, conn)
}

func (s *Subject) Reset(ctx context.Context) error {
	conn, err := s.admin.Conn(ctx)
	if err != nil {
		return err
	}
	return impl.Reset(ctx, conn)
}

func (s *Subject) Enqueue(ctx context.Context, tx pgx.Tx, p harness.Payment) error {
	if _, err := s.producer.Write(ctx, tx, impl.Payment{ID: p.ID, MerchantID: p.MerchantID, AmountCents: p.AmountCents}, time.Now()); err != nil {
		return err
	}
	if s.opts.Notify {
		return impl.Notify(ctx, tx)
	}
	return nil
}

func (s *Subject) Dispatch(ctx context.Context, i int, pub harness.Publisher) error {
	return s.dispatch(ctx, i, pub, s.opts.Step)
}

// dispatch runs dispatcher i's loop, with step as its batch if set.
func (s *Subject) dispatch(ctx context.Context, i int, pub harness.Publisher, step func(d *impl.Dispatcher) func(ctx context.Context, limit int) (int, []error)) error {
	conn := s.env.ConnString(harness.Actor{Role: harness.Dispatcher, N: i})
	sess, err := impl.NewSession(conn)
	if err != nil {
		return err
	}
	defer sess.Cut()
	d := &impl.Dispatcher{Store: &impl.Store{Session: sess, Queries: s.queries()}, Publisher: publisher{pub},
		Clock: impl.ClockFunc(time.Now), IDs: &s.ids,
		Policy: impl.Policy{Lease: s.env.Lease, MaxAttempts: s.env.MaxAttempts, BackoffBase: s.env.BackoffBase, BackoffCap: refBackoffCap}}
	loop := impl.Loop{Dispatcher: d, MaxIdle: 200 * time.Millisecond, NoScan: s.opts.NoScan, CallTimeout: callTimeout}
	if step != nil {
		loop.Step = step(d)
	} else if log, ok := pub.(loopcheck.ClaimLog); ok && s.over != "" {
		loop.Step = reportingStep(d, log, s.over)
	}
	if s.opts.Rescan > 0 {
		loop.MaxIdle, loop.Fixed = s.opts.Rescan, true
	}
	if s.opts.Notify {
		wake := make(chan struct{}, 1)
		lctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); impl.Listen(lctx, conn, wake) }()
		defer func() { cancel(); <-done }()
		loop.Wake = wake
	}
	loop.Run(ctx)
	return nil
}

// queries are the dispatcher's: the seed's, with the bury rule, as the
// variant edits them.
func (s *Subject) queries() impl.Queries {
	q := impl.DefaultQueries()
	q.BuryExpired = impl.BuryExpiredQuery // the loop's nemesis crashes relays on an event: no crash loop
	if s.opts.Queries != nil {
		s.opts.Queries(&q)
	}
	return q
}

func (s *Subject) Handle(ctx context.Context, m harness.Message) error {
	return s.consumer.Handle(ctx, impl.Message(m), nil)
}

// HandleAt is Handle with the harness's failpoints: the reference
// consumer stops before its commit or after it, before the ack.
func (s *Subject) HandleAt(ctx context.Context, m harness.Message, fp harness.Failpoints) error {
	return s.consumer.Handle(ctx, impl.Message(m), func(p impl.Failpoint) error { return fp(harness.Failpoint(p)) })
}

func (s *Subject) Effects(ctx context.Context) (map[string]int, error) {
	fx, err := (&impl.Consumer{Session: s.admin}).Effects(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, e := range fx {
		out[e.EventID]++
	}
	return maps.Clone(out), nil
}

// DeadLetters lists the payments whose events are DEAD: the reference
// gives up at MaxAttempts and keeps the row, visibly.
func (s *Subject) DeadLetters(ctx context.Context) ([]string, error) {
	return s.payments(ctx, `SELECT aggregate_id FROM outbox_events WHERE status = 'DEAD'`)
}

// Pending lists the payments whose events are not yet PUBLISHED or DEAD.
func (s *Subject) Pending(ctx context.Context) ([]string, error) {
	return s.payments(ctx, `SELECT aggregate_id FROM outbox_events WHERE status IN ('PENDING', 'PUBLISHING', 'FAILED')`)
}

func (s *Subject) payments(ctx context.Context, query string) ([]string, error) {
	conn, err := s.admin.Conn(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := conn.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

func (s *Subject) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return errors.Join(s.consumer.Session.Close(ctx), s.admin.Close(ctx))
}

type publisher struct{ p harness.Publisher }

func (p publisher) Publish(ctx context.Context, m impl.Message) error {
	return p.p.Publish(ctx, harness.Message(m))
}

// MinBackoff is the reference's backoff (Backoffer): it counts attempts on
// claim, so after k failed publishes attempts ≥ k, and its wait is
// BackoffBase × 2^min(attempts, 4).
func (s *Subject) MinBackoff(failures int) time.Duration {
	return s.env.BackoffBase * time.Duration(int64(1)<<min(failures, refBackoffCap))
}

// refBackoffCap is the reference loop's BackoffCap.
const refBackoffCap = 4

// TakeoverBound is the reference's takeover (loopcheck.Takeover): its
// claim is a committed lease, so another relay reclaims a stranded
// relay's event once the lease ran out (300 ms), after at most its
// longest sleep (200 ms) and a call in progress (2 s). A variant with a
// fixed rescan finds the expired lease at its next rescan: that cadence
// more (no notification tells it of an expired lease).
func (s *Subject) TakeoverBound() time.Duration { return 3*time.Second + s.opts.Rescan }

// Deadlines are the reference's own deadlines (loopcheck.Deadliner): its
// call timeout, which bounds a batch and so each publish in it, and a
// variant's ack deadline.
func (s *Subject) Deadlines() []time.Duration {
	if s.opts.AckDeadline > 0 {
		return []time.Duration{callTimeout, s.opts.AckDeadline}
	}
	return []time.Duration{callTimeout}
}

// IsolationBound is the reference's relay isolation (Isolated): it claims
// with FOR UPDATE SKIP LOCKED in one statement and publishes after its
// claim committed, so a relay cut off holds no lock another waits on. A
// new event is published within a batch's call timeout (2 s, the longest
// another relay may be stuck in a call of its own), its longest sleep
// (200 ms) and a margin.
func (s *Subject) IsolationBound() time.Duration { return 3 * time.Second }
