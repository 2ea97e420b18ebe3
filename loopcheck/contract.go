// Package loopcheck is the loop contract (DESIGN §4): a black-box check for
// outboxes that run their own relay loop and expose no steps. The harness
// enqueues payments inside its own transactions, starts and kills the
// subject's dispatcher loops, breaks and heals their links (toxiproxy),
// refuses publishes at the broker, and delivers what the broker got to the
// subject's consumer, duplicates included, all on real time with short
// leases. It checks effect-at-most-once after every step and, after healing
// and a bounded wait for quiescence, the end state Jepsen total-queue style:
// nothing committed is lost, nothing rolled back appears, every committed
// payment takes effect exactly once.
//
// Real time means a schedule does not replay exactly: Replay runs one again
// and again and says how often the failure came back.
package loopcheck

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/properties"
)

// Subject is an outbox with its own relay loop.
type Subject interface {
	// Reset deletes everything the subject keeps, before each schedule.
	Reset(ctx context.Context) error
	// Enqueue writes payment p and its event inside the caller's
	// transaction, which the harness then commits or rolls back.
	Enqueue(ctx context.Context, tx pgx.Tx, p properties.Payment) error
	// Dispatch runs dispatcher i's relay loop, publishing to pub, until
	// ctx is done; it must return soon after. Its database sessions must
	// use env.ConnString(dispatcher i).
	Dispatch(ctx context.Context, i int, pub properties.Publisher) error
	// Handle is the consumer receiving m; a nil error acknowledges it.
	Handle(ctx context.Context, m properties.Message) error
	// Effects counts the business effects per event_id.
	Effects(ctx context.Context) (map[string]int, error)
	Close() error
}

// Env is what a subject is built with.
type Env struct {
	// ConnString is actor a's own link (producer, dispatcher i, consumer,
	// operator for Reset and Effects).
	ConnString func(a properties.Actor) string
	// Lease, BackoffBase and MaxAttempts: the subject should use these
	// short real-time settings so leases expire within a schedule.
	Lease       time.Duration
	BackoffBase time.Duration
	MaxAttempts int
	Dispatchers int
}

// NewSubject builds a subject and creates its schema.
type NewSubject func(ctx context.Context, env Env) (Subject, error)
