// Package mutants holds known-bad variants of the reference outbox, each
// one deliberate change copying a real-world bug (docs/ci.md). The harness
// must kill every one, with the property that names its bug.
//
// A mutant changes one query, or replaces the consumer; everything else is
// the reference implementation. A new mutant is one file plus one line in
// All.
package mutants

import (
	"context"
	"time"

	"github.com/outboxcheck/outboxcheck/impl"
)

// Handler is a consumer: what impl.Consumer does.
type Handler interface {
	Handle(ctx context.Context, msg impl.Message, fp impl.Failpoints) error
}

// Writer is a producer: what impl.Producer does.
type Writer interface {
	CreatePayment(ctx context.Context, pay impl.Payment, now time.Time) (string, error)
	AbandonPayment(ctx context.Context, pay impl.Payment, now time.Time) error
}

// FailureMarker records a failed publish: what impl.Dispatcher.MarkFailed does.
type FailureMarker func(ctx context.Context, d *impl.Dispatcher, c impl.Claimed, cause error) (bool, error)

// Claimer claims up to limit due events at now: what impl.Store.Claim does.
type Claimer func(ctx context.Context, s *impl.Store, now time.Time, lease time.Duration, limit int, claimID string) ([]impl.Claimed, error)

// Mutant is one deliberate bug.
type Mutant struct {
	Name string
	// Bug says which real-world failure it copies.
	Bug string
	// Kills is the property that must catch it.
	Kills string
	// NeedsFaults: only network or broker faults expose it.
	NeedsFaults bool
	// NeedsConcurrency: only actors running at the same instant expose it.
	NeedsConcurrency bool
	// Queries, if set, edits the store's SQL.
	Queries func(*impl.Queries)
	// Schema, if set, is DDL run before the reference schema (whose
	// statements are IF NOT EXISTS): the SQL contract's own tables.
	Schema string
	// Consumer, if set, replaces the consumer.
	Consumer func(*impl.Session) Handler
	// Producer, if set, replaces the producer; broker is there for a
	// producer that publishes itself (a dual write).
	Producer func(p *impl.Producer, broker impl.Publisher) Writer
	// Claim, if set, replaces the store's claim of due events.
	Claim Claimer
	// MarkFailed, if set, replaces the dispatcher's failure handling.
	MarkFailed FailureMarker
	// Publish, if set, replaces how a dispatcher sends a claimed event.
	Publish func(ctx context.Context, d *impl.Dispatcher, c impl.Claimed) error
}

// All is the catalog, in a stable order.
var All = []Mutant{
	MarkPublishedNoFence,
	ClaimNoReclaim,
	ConsumerSplitTx,
	ProducerRetriesCommit,
	DispatcherGivesUpOnLostAck,
	ConsumerAcksBeforeCommit,
	MarkFailedNoFence,
	ClaimIgnoresAvailableAt,
	ClaimNoAttempts,
	FailureRolledBack,
	CleanupDeletesUnfinished,
	RedriveNewEventID,
	PublishNewEventID,
	MarkPublishedBeforePublishing,
	ClaimWithoutSkipLocked,
	DualWriteCommitThenPublish,
	DualWritePublishThenCommit,
	InboxSelectThenInsert,
}

// ByName finds a mutant; ok is false for an unknown name.
func ByName(name string) (Mutant, bool) {
	for _, m := range All {
		if m.Name == name {
			return m, true
		}
	}
	return Mutant{}, false
}
