package proccheck

import (
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// Version is the protocol a subject's hello must name.
const Version = "outboxcheck/1"

// hello is a process's first line.
type hello struct {
	Hello string `json:"hello"`
	Role  string `json:"role"`
	// Capabilities, in the operator's hello: what the subject has of
	// "pending", "dead-letters", "failpoints" (its consumer announces
	// them when asked), and what it declares: "publishes-once" (its
	// claims exclude each other through a publish), "leans-on-dedupe"
	// (it counts on a real broker's deduplication window: Deduper),
	// "claims" (its relays report their claims and completions:
	// ClaimReporter).
	Capabilities []string `json:"capabilities,omitempty"`
}

// request is a line from the harness to a producer, consumer or
// operator; reply is the process's answer to it, with the same ID.
type request struct {
	ID         int64     `json:"id"`
	Op         string    `json:"op"` // produce, handle, reset, effects, pending, dead-letters
	Payments   []Payment `json:"payments,omitempty"`
	Commit     bool      `json:"commit,omitempty"`
	Message    *Message  `json:"message,omitempty"`
	Failpoints bool      `json:"failpoints,omitempty"`
}

type reply struct {
	ID       *int64         `json:"id"`
	OK       bool           `json:"ok"`
	Error    string         `json:"error,omitempty"`
	Effects  map[string]int `json:"effects,omitempty"`
	Payments []string       `json:"payments,omitempty"`
	// Failpoint is a consumer's announcement, not a reply: it has reached
	// the named point and waits for {"continue": true}.
	Failpoint string `json:"failpoint,omitempty"`
}

type continuation struct {
	Continue bool `json:"continue"`
}

// publish is a relay's request to the broker; published is the harness's
// answer: accepted, refused (the broker does not have it), or error (no
// acknowledgement: it may have arrived). A relay that stops waiting for
// an answer says so ({"op": "abandon", "id": N}): the publish is given up
// on, as a Go relay's cancelled context gives it up, and an ack that
// comes after is known to have come to no one.
//
// A relay whose operator lists "claims" also reports its claims and
// completions, as its database reported them: {"op": "claimed", "event":
// E, "claim": C, "over": C0} (it took event E under claim C, over the
// claim C0 that still held it, its lease run out; "over" absent if none
// did) and {"op": "completed", "event": E, "claim": C, "changed": true}
// (its update that ends claim C on E committed, and changed the row or
// not). Neither has a reply.
type publish struct {
	Op      string   `json:"op"` // publish, abandon, claimed, completed
	ID      *int64   `json:"id"`
	Message *Message `json:"message,omitempty"`
	Event   string   `json:"event,omitempty"`
	Claim   string   `json:"claim,omitempty"`
	Over    string   `json:"over,omitempty"`
	Changed *bool    `json:"changed,omitempty"`
}

type published struct {
	ID     int64  `json:"id"`
	Result string `json:"result"`
	Error  string `json:"error,omitempty"`
}

// Payment is harness.Payment on the wire (a produce request's), for both
// sides of the protocol (proccheck/serve is the child's).
type Payment struct {
	ID          string `json:"id"`
	MerchantID  string `json:"merchant_id"`
	AmountCents int64  `json:"amount_cents"`
}

// Message is harness.Message on the wire (a handle request's, a publish's);
// its payload is text.
type Message struct {
	ID          string    `json:"id"`
	Type        string    `json:"type"`
	AggregateID string    `json:"aggregate_id"`
	Sequence    int64     `json:"sequence"`
	OccurredAt  time.Time `json:"occurred_at"`
	Payload     string    `json:"payload"`
}

// WireMessage is m on the wire.
func WireMessage(m harness.Message) *Message {
	return &Message{ID: m.ID, Type: m.Type, AggregateID: m.AggregateID, Sequence: m.Sequence, OccurredAt: m.OccurredAt, Payload: string(m.Payload)}
}

// Harness is m as the harness's.
func (m *Message) Harness() harness.Message {
	return harness.Message{ID: m.ID, Type: m.Type, AggregateID: m.AggregateID, Sequence: m.Sequence, OccurredAt: m.OccurredAt, Payload: []byte(m.Payload)}
}

// WirePayments are ps on the wire.
func WirePayments(ps []harness.Payment) []Payment {
	out := make([]Payment, len(ps))
	for i, p := range ps {
		out[i] = Payment{ID: p.ID, MerchantID: p.MerchantID, AmountCents: p.AmountCents}
	}
	return out
}

// Harness is p as the harness's.
func (p Payment) Harness() harness.Payment {
	return harness.Payment{ID: p.ID, MerchantID: p.MerchantID, AmountCents: p.AmountCents}
}
