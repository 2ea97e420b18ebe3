package model

import (
	"maps"
	"slices"
	"time"
)

// Row is an outbox row as the model expects it or the database shows it.
// Times are zero where the column is NULL.
type Row struct {
	ID             string
	AggregateID    string // the payment
	Status         Status
	Attempts       int
	ClaimID        string
	ClaimExpiresAt time.Time
	AvailableAt    time.Time
	CreatedAt      time.Time
	PublishedAt    time.Time

	// The model's own, never read back:
	// AvailableLatest, if set, is the latest available_at a jittered
	// backoff may have given (AvailableAt the earliest), until Observe
	// adopts the one the database shows.
	AvailableLatest time.Time
	// Limit is the row's own attempt limit where a redrive granted one
	// more attempt (0: Semantics.MaxAttempts).
	Limit int
}

// Message is one publish the broker accepted.
type Message struct {
	EventID string
	Payload string
}

// State is the whole model. Treat it as a value: step functions return a
// new State and never change the one they are given.
type State struct {
	Now time.Time
	Sem Semantics

	Rows    map[string]Row       // event_id → the row the model is sure of
	Maybe   map[string][]Row     // event_id → every row an indeterminate op may have left (Status Absent: no row)
	Unsure  map[string]time.Time // payment → created_at of a commit whose outcome is unknown and whose event_id was not returned
	Payload map[string]string    // event_id → payload fixed at creation (first observed)
	Gone    map[string]Row       // event_id → last state of a row cleanup removed
	Held    map[string]Hold      // event_id → its lock-held claim (Semantics.LockHeld); Rows keeps what others see
	Ended   map[string]Hold      // lock-held claims whose session ended since the last observation (Release)
	Claims  map[string]bool      // every claim_id ever handed out
	Aborted map[string]bool      // payments whose transaction rolled back

	Broker  []Message
	Acked   map[string]bool // event_id → a delivery of it was acknowledged
	Inbox   map[string]bool // event_id → in the consumer's inbox
	Effects map[string]int  // event_id → business effects applied
	MaybeFx map[string]bool // event_id → a delivery may or may not have committed
}

// New is an empty model at now for a subject with semantics sem.
func New(now time.Time, sem Semantics) State {
	return State{Now: now, Sem: sem,
		Rows: map[string]Row{}, Maybe: map[string][]Row{}, Unsure: map[string]time.Time{},
		Payload: map[string]string{}, Gone: map[string]Row{}, Held: map[string]Hold{}, Ended: map[string]Hold{}, Claims: map[string]bool{},
		Aborted: map[string]bool{}, Acked: map[string]bool{}, Inbox: map[string]bool{},
		Effects: map[string]int{}, MaybeFx: map[string]bool{}}
}

// clone deep-copies s so a step can change the copy.
func (s State) clone() State {
	c := s
	c.Rows, c.Unsure, c.Payload = maps.Clone(s.Rows), maps.Clone(s.Unsure), maps.Clone(s.Payload)
	c.Gone, c.Claims, c.Aborted = maps.Clone(s.Gone), maps.Clone(s.Claims), maps.Clone(s.Aborted)
	c.Held, c.Ended = maps.Clone(s.Held), maps.Clone(s.Ended)
	c.Acked, c.Inbox, c.Effects, c.MaybeFx = maps.Clone(s.Acked), maps.Clone(s.Inbox), maps.Clone(s.Effects), maps.Clone(s.MaybeFx)
	c.Maybe = make(map[string][]Row, len(s.Maybe))
	for k, v := range s.Maybe {
		c.Maybe[k] = slices.Clone(v)
	}
	c.Broker = slices.Clone(s.Broker)
	return c
}

// Settled reports whether no outcome is still unknown.
func (s State) Settled() bool { return len(s.Maybe) == 0 && len(s.Unsure) == 0 && len(s.MaybeFx) == 0 }

// Known reports whether an event was (or may have been) committed.
func (s State) Known(id string) bool {
	_, a := s.Rows[id]
	_, b := s.Maybe[id]
	_, c := s.Gone[id]
	return a || b || c
}

// ids returns the keys of m in order, for deterministic iteration.
func ids[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
