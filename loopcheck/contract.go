// Package loopcheck is the loop contract (docs/adapters.md): a black-box check for
// outboxes that run their own relay loop and expose no steps. The harness
// enqueues payments inside its own transactions, starts, kills and
// restarts the subject's dispatcher loops, partitions and heals their links
// (toxiproxy), takes the broker down for bounded windows of real time, and
// delivers what the broker got to the subject's consumer, duplicates
// included, all on real time with short leases. It checks
// effect-at-most-once after every step and, after healing and an adaptive
// wait, the end state Jepsen total-queue style: every committed payment is
// delivered (one effect), dead (the subject gave up on it and shows it),
// pending (still in the subject's outbox: late once past the bound) or
// lost; nothing rolled back appears; nothing takes effect twice.
//
// Real time means a schedule does not replay exactly: Replay runs one again
// and again and says how often the failure came back.
package loopcheck

import (
	"context"
	"database/sql"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/harness"
)

// Subject is an outbox with its own relay loop.
type Subject interface {
	// Reset deletes everything the subject keeps, before each schedule.
	Reset(ctx context.Context) error
	// Enqueue writes payment p and its event inside the caller's
	// transaction, which the harness then commits or rolls back. The
	// event's Message.AggregateID, as published, must be p.ID: that is how
	// the judge ties an effect to the payment that caused it.
	Enqueue(ctx context.Context, tx pgx.Tx, p harness.Payment) error
	// Dispatch runs dispatcher i's relay loop, publishing to pub, until
	// ctx is done; it must return soon after (the harness waits 5 s, then
	// says so in the story). Its database sessions must use
	// env.ConnString(dispatcher i). Each call is one incarnation: when the
	// harness kills it, that pub refuses every later publish and its link
	// refuses new connections, so work done "after death" cannot land.
	Dispatch(ctx context.Context, i int, pub harness.Publisher) error
	// Handle is the consumer receiving m; a nil error acknowledges it.
	Handle(ctx context.Context, m harness.Message) error
	// Effects counts the business effects per event_id.
	Effects(ctx context.Context) (map[string]int, error)
	Close() error
}

// SQLEnqueuer is a Subject that enqueues on database/sql (lib/pq-style
// libraries, GORM, sqlx, bun): the harness then calls EnqueueSQL, never
// Enqueue, with a *sql.Tx it opened through pgx's stdlib driver on the
// producer's link, and commits or rolls it back itself, as it does a
// pgx.Tx. EnqueueSQL must neither commit nor roll back tx. A subject
// with no pgx code of its own implements SQLSubject and is handed to the
// harness through SQL.
type SQLEnqueuer interface {
	EnqueueSQL(ctx context.Context, tx *sql.Tx, p harness.Payment) error
}

// SQLSubject is a Subject that enqueues only on database/sql: Subject
// with EnqueueSQL in place of Enqueue. The optional interfaces
// (DeadLetterer, Pender, Failpointer) apply to it as to a Subject.
type SQLSubject interface {
	Reset(ctx context.Context) error
	SQLEnqueuer
	Dispatch(ctx context.Context, i int, pub harness.Publisher) error
	Handle(ctx context.Context, m harness.Message) error
	Effects(ctx context.Context) (map[string]int, error)
	Close() error
}

// NewSQLSubject builds an SQLSubject and creates its schema.
type NewSQLSubject func(ctx context.Context, env Env) (SQLSubject, error)

// DeadLetterer is a Subject that gives up on events (after its maximum
// attempts) and keeps them durably visible as dead: a dead-letter table, a
// DEAD status, a discarded job. DeadLetters lists the payments
// (Payment.ID) whose events are dead now. A subject that implements it may
// see broker outages longer than Env.RetryBudget; a dead payment is not
// lost.
type DeadLetterer interface {
	DeadLetters(ctx context.Context) ([]string, error)
}

// Pender is a Subject that can list the payments (Payment.ID) whose events
// are still in its outbox, not yet published for good. The judge then
// tells a late event (pending past the bound: timely-delivery) from a lost
// one (no-loss). Without it, an event not delivered by the bound is lost.
type Pender interface {
	Pending(ctx context.Context) ([]string, error)
}

// Failpointer is a Subject whose consumer the harness can crash at a named
// point: HandleAt is Handle, calling fp at harness.BeforeCommit (the
// effect written, not committed) and harness.AfterCommit (committed,
// not yet acknowledged); a non-nil error from fp must end HandleAt there at
// once, as a crash would. The harness then cuts the consumer's link, ends
// its sessions, and delivers the message again.
type Failpointer interface {
	HandleAt(ctx context.Context, m harness.Message, fp harness.Failpoints) error
}

// Env is what a subject is built with.
type Env struct {
	// ConnString is actor a's own link (producer, dispatcher i, consumer,
	// operator for Reset, Effects, DeadLetters and Pending). The
	// operator's goes straight to the server; the others through the
	// harness's fault proxy.
	ConnString func(a harness.Actor) string
	// Lease, BackoffBase and MaxAttempts: the subject should map these
	// short real-time settings onto its own knobs (docs/adapters.md), so
	// that leases expire and retries come due within a schedule.
	Lease       time.Duration
	BackoffBase time.Duration
	MaxAttempts int
	Dispatchers int
	// RetryBudget is how long of continuous publish failures the subject
	// must keep retrying an event before it may give up. Unless the
	// subject is a DeadLetterer, the harness keeps a schedule's broker
	// downtime, in all, within it, so a subject that cannot show its dead
	// letters is never made to lose an event by giving up correctly.
	RetryBudget time.Duration
	// DedupeWindow is the real broker's deduplication window (its
	// stream's Nats-Msg-Id window: Options.JetStream), zero when the
	// broker is the harness's own, which deduplicates nothing. WireHold
	// is how long the harness's wire to that broker may hold a message
	// before it arrives (its longest broker-link fault, and a margin). A
	// relay that leans on the window (Deduper) must not send an event
	// again later than DedupeWindow − WireHold after its first send.
	DedupeWindow time.Duration
	WireHold     time.Duration
}

// NewSubject builds a subject and creates its schema.
type NewSubject func(ctx context.Context, env Env) (Subject, error)

// Backoffer is a Subject that declares how it spaces its retries:
// after an event's k-th failed publish (k ≥ 1, counted over every relay),
// its next publish comes no sooner than MinBackoff(k). Jitter and a cap
// are the subject's to fold in: MinBackoff is the low end. The harness
// checks it from the broker's record (backoff), within backoffSlack, on
// pairs of attempts with no kill, stop or dispatcher partition between
// them (a failure whose record was cut off leaves the lease to decide).
type Backoffer interface {
	MinBackoff(failures int) time.Duration
}

// Stopper is a Subject whose relays stop through the library's own stop
// (a Close, a Shutdown, a drain): Stop asks dispatcher i's incarnation
// now running to stop, and Dispatch must then return (the harness waits
// 5 s, then kills it), while the context the harness gave Dispatch stays
// alive. Whatever the relay flushes, acks or marks on its way out must
// be true: nothing it calls sent may be missing from the broker
// (no-loss). Without it, a stop step cancels Dispatch's context.
type Stopper interface {
	Stop(ctx context.Context, i int) error
}

// Isolated is a Subject with more than one relay whose relays do not wait
// on each other: while one is cut off holding whatever it holds (locks, a
// transaction, a claim), another live relay publishes a new event within
// IsolationBound of its commit (relay-isolation). A subject with one
// active relay at a time (a leader lock) does not declare it.
type Isolated interface {
	IsolationBound() time.Duration
}
