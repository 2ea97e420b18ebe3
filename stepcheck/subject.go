// Package stepcheck is the step contract: it checks an outbox + inbox
// Subject against the pure model. A rapid state machine drives it one
// action at a time on the harness's clock, checks the safety properties
// (package properties names them) after every action, then drains and
// checks liveness, recording a history that reports and replays are
// built from.
package stepcheck

import (
	"context"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/model"
)

// Claimed is an event a dispatcher holds under a claim.
type Claimed struct {
	ID          string
	AggregateID string
	EventType   string
	Sequence    int64
	Payload     []byte
	CreatedAt   time.Time
	Attempts    int
	ClaimID     string
}

// Row is one outbox row read back for comparison; NULL times are zero.
type Row struct {
	ID             string
	AggregateID    string
	Payload        []byte
	Status         string
	Attempts       int
	ClaimID        string
	ClaimExpiresAt time.Time
	AvailableAt    time.Time
	CreatedAt      time.Time
	PublishedAt    time.Time
}

// Stats are an operator's counts (see model.Stats).
type Stats = model.Stats

// Subject is the step contract (docs/adapters.md): every operation of an outbox +
// inbox as one call, with time as a parameter. Dispatcher and consumer
// numbers name actors, each with its own database session. The harness
// calls one method at a time, each under a deadline.
type Subject interface {
	// Reset deletes every row the subject keeps, before each check.
	Reset(ctx context.Context) error

	// Commit writes the payment and its outbox event in one transaction
	// and returns the event_id.
	Commit(ctx context.Context, p harness.Payment, now time.Time) (string, error)
	// Rollback writes the payment and its event, then rolls back.
	Rollback(ctx context.Context, p harness.Payment, now time.Time) error

	// Claim has dispatcher take up to limit due events at now, each under
	// a claim_id no earlier claim used (a lease, or under
	// Semantics.LockHeld the open transaction that locks it; mint ids with
	// Env.NewID), with the attempts the row has once claimed.
	Claim(ctx context.Context, dispatcher int, now time.Time, limit int) ([]Claimed, error)
	// Publish hands the claimed event's message to pub.
	Publish(ctx context.Context, dispatcher int, c Claimed, pub harness.Publisher) error
	// MarkPublished records that c's publish was acknowledged, fenced by
	// c's claim: true if it changed the row (PUBLISHED, or deleted under
	// DeleteOnSuccess), false if the claim no longer holds it (its lease
	// was taken over, or its transaction is gone).
	MarkPublished(ctx context.Context, dispatcher int, c Claimed, now time.Time) (bool, error)
	// MarkFailed records a refused publish, fenced as MarkPublished is: one
	// more attempt where failures count them, FAILED until the backoff is
	// over, DEAD at the attempt limit; true if it changed the row.
	MarkFailed(ctx context.Context, dispatcher int, c Claimed, now time.Time, cause error) (bool, error)
	// NextAttemptAt is when the outbox next has something to do (the
	// earliest available_at or lease end); false if nothing waits.
	NextAttemptAt(ctx context.Context) (time.Time, bool, error)

	// Redrive is the operator's redrive of eventID at now, as
	// Semantics.Redrive declares; true if it changed the row.
	Redrive(ctx context.Context, eventID string, now time.Time) (bool, error)
	// Cleanup deletes PUBLISHED rows published at or before now -
	// retention (strictly before under StrictRetention) and says how many.
	Cleanup(ctx context.Context, now time.Time, retention time.Duration) (int, error)
	// Stats is what an operator's dashboard shows at now (model.Stats).
	Stats(ctx context.Context, now time.Time) (Stats, error)

	// Handle is consumer c receiving m; a nil error acknowledges it.
	Handle(ctx context.Context, consumer int, m harness.Message, fp harness.Failpoints) error

	// Rows and Effects read back state: every outbox row, and the number
	// of business effects per event_id.
	Rows(ctx context.Context) ([]Row, error)
	Effects(ctx context.Context) (map[string]int, error)

	// Crash cuts an actor's database session abruptly, as a dying process
	// would; its next call starts a new session. Where claims are
	// lock-held (model.Semantics.LockHeld), the harness then ends the
	// dispatcher's server sessions itself, so its open transactions end
	// too: every session of a dispatcher must be opened on its ConnString.
	Crash(a harness.Actor)
	// Indeterminate reports whether err leaves its operation's effect
	// unknown (it may have taken effect). Anything else is a definite
	// failure: it took no effect.
	Indeterminate(err error) bool

	Close() error
}

// Rescuer is a Subject whose expired leases a rescuer takes back, as its
// Semantics.Rescue declares (a job queue's rescuer, an outbox relay's
// janitor), instead of its claim query. Rescue is one pass at now: every
// row whose lease is over is re-queued with its claim revoked; it returns
// how many. The harness draws it as an action, and runs it in the drain.
type Rescuer interface {
	Rescue(ctx context.Context, now time.Time) (int, error)
}

// ReadBacker is optional: a subject that can read back everything the
// harness reads after a step (Rows, Effects, Stats at now and
// NextAttemptAt) in one call implements it, and the harness calls it
// instead of the four, which makes a read-back one round trip (a
// pipelined batch, as the reference does) instead of four. What it
// returns must be exactly what the four methods return.
type ReadBacker interface {
	ReadBack(ctx context.Context, now time.Time) (ReadBack, error)
}

// ReadBack is what ReadBacker reads.
type ReadBack struct {
	Rows          []Row
	Effects       map[string]int
	Stats         Stats
	NextAttemptAt time.Time
	HasNext       bool // false: no row is due at any time
}

// Env is what a subject is built from.
type Env struct {
	// ConnString is the connection string of actor a's own link.
	ConnString func(a harness.Actor) string
	// NewID makes ids (event_id, claim_id) deterministically per check;
	// a subject must take all its ids from here.
	NewID func() string
	// Semantics is how the subject behaves (the run's Options.Semantics):
	// the lease, attempt limit and backoff it must use, and the rules it
	// declared where it differs from the seed.
	Semantics model.Semantics
	// Dispatchers and Consumers count the actors of each kind.
	Dispatchers, Consumers int
	// Broker is the harness's broker for a subject that publishes outside
	// Publish (a producer's dual write: a bug the harness must see). What
	// it accepts is checked like any other publish.
	Broker harness.Publisher
}

// NewSubject builds a subject on an empty, migrated-by-it database.
type NewSubject func(ctx context.Context, env Env) (Subject, error)
