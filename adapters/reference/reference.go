// Package reference adapts the reference implementation (impl) to the step
// contract of package stepcheck. It is a thin translation: every decision
// is impl's. impl itself never imports properties.
package reference

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/impl"
	"github.com/outboxcheck/outboxcheck/impl/mutants"
	"github.com/outboxcheck/outboxcheck/model"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// Subject is impl behind the step contract. Its fields are exported so that
// mutants (impl/mutants) can embed it and change one behaviour.
type Subject struct {
	Env         stepcheck.Env
	Producer    mutants.Writer
	Dispatchers []*impl.Dispatcher
	claim       mutants.Claimer
	markFailed  mutants.FailureMarker
	publish     func(ctx context.Context, d *impl.Dispatcher, c impl.Claimed) error
	Consumers   []mutants.Handler
	Admin       *impl.Store // the operator's session: redrive, cleanup, stats, read-backs
	sessions    map[harness.Actor]*impl.Session
	lastNow     []time.Time // per dispatcher: the harness time of its last call
}

// New builds the reference subject and creates its schema.
func New(ctx context.Context, env stepcheck.Env) (stepcheck.Subject, error) {
	return Build(ctx, env, mutants.Mutant{})
}

// Mutated builds subjects that are the reference with mutant m's change.
func Mutated(m mutants.Mutant) stepcheck.NewSubject {
	return func(ctx context.Context, env stepcheck.Env) (stepcheck.Subject, error) {
		return Build(ctx, env, m)
	}
}

// Build is New with mutant m's change applied (the zero Mutant changes
// nothing), returning the concrete type.
func Build(ctx context.Context, env stepcheck.Env, m mutants.Mutant) (*Subject, error) {
	if !seedShaped(env.Semantics) {
		return nil, errors.New("reference: it implements the seed's semantics only (lease, attempts, 2^k backoff and its cap are yours to set; no other rule)")
	}
	queries := impl.DefaultQueries()
	if m.Queries != nil {
		m.Queries(&queries)
	}
	s := &Subject{Env: env, sessions: map[harness.Actor]*impl.Session{}, lastNow: make([]time.Time, env.Dispatchers)}
	ids := impl.IDFunc(env.NewID)
	open := func(a harness.Actor) (*impl.Session, error) {
		sess, err := impl.NewSession(env.ConnString(a))
		s.sessions[a] = sess
		return sess, err
	}
	var err error
	var sess *impl.Session
	if sess, err = open(harness.Actor{Role: harness.Producer}); err != nil {
		return nil, err
	}
	producer := &impl.Producer{Session: sess, IDs: ids}
	s.Producer = producer
	if m.Producer != nil {
		s.Producer = m.Producer(producer, publisher{env.Broker})
	}
	s.publish = m.Publish
	if s.publish == nil {
		s.publish = func(ctx context.Context, d *impl.Dispatcher, c impl.Claimed) error { return d.Publish(ctx, c) }
	}
	s.claim = m.Claim
	if s.claim == nil {
		s.claim = func(ctx context.Context, st *impl.Store, now time.Time, lease time.Duration, limit int, claimID string) ([]impl.Claimed, error) {
			return st.Claim(ctx, now, lease, limit, claimID)
		}
	}
	s.markFailed = m.MarkFailed
	if s.markFailed == nil {
		s.markFailed = func(ctx context.Context, d *impl.Dispatcher, c impl.Claimed, cause error) (bool, error) {
			return d.MarkFailed(ctx, c, cause)
		}
	}
	for i := range env.Dispatchers {
		if sess, err = open(harness.Actor{Role: harness.Dispatcher, N: i}); err != nil {
			return nil, err
		}
		store := &impl.Store{Session: sess, Queries: queries}
		s.Dispatchers = append(s.Dispatchers, &impl.Dispatcher{Store: store, IDs: ids, Policy: policyOf(env.Semantics)})
	}
	for i := range env.Consumers {
		if sess, err = open(harness.Actor{Role: harness.Consumer, N: i}); err != nil {
			return nil, err
		}
		var h mutants.Handler = &impl.Consumer{Session: sess}
		if m.Consumer != nil {
			h = m.Consumer(sess)
		}
		s.Consumers = append(s.Consumers, h)
	}
	if sess, err = open(harness.Actor{Role: harness.Operator}); err != nil {
		return nil, err
	}
	s.Admin = &impl.Store{Session: sess, Queries: queries}
	conn, err := sess.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if m.Schema != "" {
		if _, err := conn.Exec(ctx, m.Schema); err != nil {
			return s, fmt.Errorf("schema: %w", err)
		}
	}
	return s, impl.Migrate(ctx, conn)
}

// seedShaped reports whether sem declares nothing but the seed's rules.
func seedShaped(sem model.Semantics) bool {
	return sem.Backoff == nil && !sem.AttemptsOnFailure && sem.Rescue == nil && !sem.Strict && !sem.StrictDue && !sem.StrictExpiry && !sem.StrictRetention &&
		!sem.DeadKeepsAvailableAt && sem.Redrive == (model.RedriveRule{}) && len(sem.Names) == 0 && len(sem.Without) == 0
}

func policyOf(p model.Semantics) impl.Policy {
	return impl.Policy{Lease: p.Lease, MaxAttempts: p.MaxAttempts, BackoffBase: p.BackoffBase, BackoffCap: p.BackoffCap}
}

func (s *Subject) Reset(ctx context.Context) error {
	clear(s.lastNow) // a new check: nothing carries over, so it replays alone
	conn, err := s.Admin.Session.Conn(ctx)
	if err != nil {
		return err
	}
	return impl.Reset(ctx, conn)
}

func (s *Subject) Commit(ctx context.Context, p harness.Payment, now time.Time) (string, error) {
	return s.Producer.CreatePayment(ctx, payment(p), now)
}

func (s *Subject) Rollback(ctx context.Context, p harness.Payment, now time.Time) error {
	return s.Producer.AbandonPayment(ctx, payment(p), now)
}

func (s *Subject) Claim(ctx context.Context, d int, now time.Time, limit int) ([]stepcheck.Claimed, error) {
	s.lastNow[d] = now
	disp := s.Dispatchers[d]
	got, err := s.claim(ctx, disp.Store, now, disp.Policy.Lease, limit, disp.IDs.NewID())
	out := make([]stepcheck.Claimed, len(got))
	for i, c := range got {
		out[i] = FromImpl(c)
	}
	return out, err
}

func (s *Subject) Publish(ctx context.Context, d int, c stepcheck.Claimed, pub harness.Publisher) error {
	disp := *s.at(d, s.lastNow[d]) // Publish takes no time: the dispatcher's last one
	disp.Publisher = publisher{pub}
	return s.publish(ctx, &disp, ToImpl(c))
}

func (s *Subject) MarkPublished(ctx context.Context, d int, c stepcheck.Claimed, now time.Time) (bool, error) {
	return s.at(d, now).MarkPublished(ctx, ToImpl(c))
}

func (s *Subject) MarkFailed(ctx context.Context, d int, c stepcheck.Claimed, now time.Time, cause error) (bool, error) {
	return s.markFailed(ctx, s.at(d, now), ToImpl(c), cause)
}

// at is dispatcher d reading the harness's time now.
func (s *Subject) at(d int, now time.Time) *impl.Dispatcher {
	s.lastNow[d] = now
	disp := *s.Dispatchers[d]
	disp.Clock = impl.ClockFunc(func() time.Time { return now })
	return &disp
}

func (s *Subject) NextAttemptAt(ctx context.Context) (time.Time, bool, error) {
	return s.Admin.NextAttemptAt(ctx)
}

func (s *Subject) Redrive(ctx context.Context, id string, now time.Time) (bool, error) {
	return s.Admin.Redrive(ctx, id, now)
}

func (s *Subject) Cleanup(ctx context.Context, now time.Time, retention time.Duration) (int, error) {
	return s.Admin.Cleanup(ctx, now, retention)
}

func (s *Subject) Stats(ctx context.Context, now time.Time) (stepcheck.Stats, error) {
	st, err := s.Admin.Stats(ctx, now)
	return stats(st), err
}

func stats(st impl.Stats) stepcheck.Stats {
	return stepcheck.Stats{Pending: st.Pending, OldestPendingAge: st.OldestPendingAge, Failed: st.Failed, Dead: st.Dead}
}

func (s *Subject) Handle(ctx context.Context, c int, m harness.Message, fp harness.Failpoints) error {
	return s.Consumers[c].Handle(ctx, impl.Message(m), Failpoints(fp))
}

// Failpoints converts the harness's failpoints to impl's.
func Failpoints(fp harness.Failpoints) impl.Failpoints {
	if fp == nil {
		return nil
	}
	return func(p impl.Failpoint) error { return fp(harness.Failpoint(p)) }
}

func (s *Subject) Rows(ctx context.Context) ([]stepcheck.Row, error) {
	got, err := s.Admin.Rows(ctx)
	return rows(got), err
}

func rows(rows []impl.Row) []stepcheck.Row {
	out := make([]stepcheck.Row, len(rows))
	for i, r := range rows {
		out[i] = stepcheck.Row{ID: r.ID, AggregateID: r.AggregateID, Payload: r.Payload, Status: string(r.Status),
			Attempts: r.Attempts, ClaimID: r.ClaimID, ClaimExpiresAt: r.ClaimExpiresAt,
			AvailableAt: r.AvailableAt, CreatedAt: r.CreatedAt, PublishedAt: r.PublishedAt}
	}
	return out
}

func (s *Subject) Effects(ctx context.Context) (map[string]int, error) {
	c := impl.Consumer{Session: s.Admin.Session}
	got, err := c.Effects(ctx)
	return effects(got), err
}

func effects(effects []impl.Effect) map[string]int {
	out := map[string]int{}
	for _, e := range effects {
		out[e.EventID]++
	}
	return out
}

// ReadBack reads rows, effects, stats and the next attempt in one round
// trip (impl.Store.Snapshot).
func (s *Subject) ReadBack(ctx context.Context, now time.Time) (stepcheck.ReadBack, error) {
	snap, err := s.Admin.Snapshot(ctx, now)
	rb := stepcheck.ReadBack{Rows: rows(snap.Rows), Effects: effects(snap.Effects), Stats: stats(snap.Stats),
		NextAttemptAt: snap.NextAttemptAt, HasNext: snap.HasNext}
	return rb, err
}

func (s *Subject) Crash(a harness.Actor) {
	if sess := s.sessions[a]; sess != nil {
		sess.Cut()
	}
}

func (s *Subject) Indeterminate(err error) bool { return impl.IsIndeterminate(err) }

func (s *Subject) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), impl.ConnectTimeout)
	defer cancel()
	var errs []error
	for _, sess := range s.sessions {
		errs = append(errs, sess.Close(ctx))
	}
	return errors.Join(errs...)
}

type publisher struct{ p harness.Publisher }

func (p publisher) Publish(ctx context.Context, m impl.Message) error {
	return p.p.Publish(ctx, harness.Message(m))
}

func payment(p harness.Payment) impl.Payment {
	return impl.Payment{ID: p.ID, MerchantID: p.MerchantID, AmountCents: p.AmountCents}
}

// FromImpl and ToImpl convert a claimed event between the two packages.
func FromImpl(c impl.Claimed) stepcheck.Claimed {
	return stepcheck.Claimed{ID: c.ID, AggregateID: c.AggregateID, EventType: c.EventType, Sequence: c.Sequence,
		Payload: c.Payload, CreatedAt: c.CreatedAt, Attempts: c.Attempts, ClaimID: c.ClaimID}
}

func ToImpl(c stepcheck.Claimed) impl.Claimed {
	return impl.Claimed{ID: c.ID, AggregateID: c.AggregateID, EventType: c.EventType, Sequence: c.Sequence,
		Payload: c.Payload, CreatedAt: c.CreatedAt, Attempts: c.Attempts, ClaimID: c.ClaimID}
}
