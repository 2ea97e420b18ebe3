package harness

import (
	"context"
	"time"
)

// Payment is the business input of one producer transaction.
type Payment struct {
	ID          string
	MerchantID  string
	AmountCents int64
}

// Message is what a dispatcher hands the broker and a consumer receives.
type Message struct {
	ID          string
	Type        string
	AggregateID string
	Sequence    int64
	OccurredAt  time.Time
	Payload     []byte
}

// Publisher is the harness-owned broker as a dispatcher sees it. A nil
// error is the broker's acknowledgement.
type Publisher interface {
	Publish(ctx context.Context, m Message) error
}

// Failpoint names where the harness may stop a consumer.
type Failpoint string

const (
	BeforeCommit Failpoint = "before-commit"
	AfterCommit  Failpoint = "after-commit" // committed, not yet acknowledged
)

// Failpoints is called by a consumer at each Failpoint; a non-nil error
// means "you crashed here": return it at once.
type Failpoints func(Failpoint) error
