package impl

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Message is what goes to the broker: the event with its stable event_id.
type Message struct {
	ID          string
	Type        string
	AggregateID string
	Sequence    int64
	OccurredAt  time.Time
	Payload     []byte
}

// Publisher sends a message to the broker. A nil error means the broker
// acknowledged it.
type Publisher interface {
	Publish(ctx context.Context, msg Message) error
}

// MessageOf is the message for a claimed event: the event_id fixed at
// creation, never a new one.
func MessageOf(c Claimed) Message {
	return Message{ID: c.ID, Type: c.EventType, AggregateID: c.AggregateID,
		Sequence: c.Sequence, OccurredAt: c.CreatedAt, Payload: c.Payload}
}

// Dispatcher claims due events, publishes them and records the outcome
// under its claim, as the seed's DispatchOutboxBatch does.
type Dispatcher struct {
	Store     *Store
	Publisher Publisher
	Clock     Clock
	IDs       IDs
	Policy    Policy
}

// Claim takes up to limit due events under a fresh claim_id, first
// burying those whose claim expired at the attempt limit when the store's
// queries have that rule (Queries.BuryExpired).
func (d *Dispatcher) Claim(ctx context.Context, limit int) ([]Claimed, error) {
	if limit < 1 {
		return nil, errors.New("claim: batch limit must be positive")
	}
	now := d.Clock.Now().UTC()
	if _, err := d.Store.BuryExpired(ctx, now, d.Policy.MaxAttempts); err != nil {
		return nil, err
	}
	return d.Store.Claim(ctx, now, d.Policy.Lease, limit, d.IDs.NewID())
}

// Publish sends one claimed event to the broker.
func (d *Dispatcher) Publish(ctx context.Context, c Claimed) error {
	return d.Publisher.Publish(ctx, MessageOf(c))
}

// MarkPublished records an acknowledged publish under c's claim.
func (d *Dispatcher) MarkPublished(ctx context.Context, c Claimed) (bool, error) {
	return d.Store.MarkPublished(ctx, c.ID, c.ClaimID, d.Clock.Now().UTC())
}

// MarkFailed records a failed publish under c's claim: FAILED with a backoff
// of 2^min(attempts, cap) base units, or DEAD at the attempt limit.
func (d *Dispatcher) MarkFailed(ctx context.Context, c Claimed, cause error) (bool, error) {
	now := d.Clock.Now().UTC()
	status := d.Policy.FailureStatus(c.Attempts)
	return d.Store.MarkFailed(ctx, c.ID, c.ClaimID, status, now.Add(d.Policy.Backoff(c.Attempts)), cause.Error())
}

// DispatchBatch claims up to limit events and publishes each, marking it
// published or failed. It returns how many it claimed and every failure.
func (d *Dispatcher) DispatchBatch(ctx context.Context, limit int) (int, []error) {
	events, err := d.Claim(ctx, limit)
	if err != nil {
		return 0, []error{fmt.Errorf("claim outbox events: %w", err)}
	}
	var failures []error
	for _, ev := range events {
		if err := d.Send(ctx, ev); err != nil {
			failures = append(failures, err)
		}
	}
	return len(events), failures
}

// Send publishes one claimed event and marks it published, or failed
// if the publish failed; it returns what went wrong.
func (d *Dispatcher) Send(ctx context.Context, ev Claimed) error {
	if err := d.Publish(ctx, ev); err != nil {
		if _, markErr := d.MarkFailed(ctx, ev, err); markErr != nil {
			err = errors.Join(err, markErr)
		}
		return fmt.Errorf("publish outbox event %s: %w", ev.ID, err)
	}
	if _, err := d.MarkPublished(ctx, ev); err != nil {
		return fmt.Errorf("mark outbox event %s published: %w", ev.ID, err)
	}
	return nil
}

// NextAttemptAt is when DispatchBatch could next find work.
func (d *Dispatcher) NextAttemptAt(ctx context.Context) (time.Time, bool, error) {
	return d.Store.NextAttemptAt(ctx)
}
