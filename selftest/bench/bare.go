package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/outboxcheck/outboxcheck/impl"
)

// Bare is the rate of the core verbs issued straight through impl, with
// no harness: commit, claim, mark published and handle, one after the
// other on warm sessions, fault-free.
type Bare struct {
	Ops  int
	Took time.Duration
}

// Rate is operations per second.
func (b Bare) Rate() float64 { return float64(b.Ops) / b.Took.Seconds() }

func (b *Bare) add(o Bare) { b.Ops, b.Took = b.Ops+o.Ops, b.Took+o.Took }

// BareOps runs n rounds of the core verbs on the database at url (which it
// resets) and returns the operations and the time they took.
func BareOps(ctx context.Context, url string, n int) (Bare, error) {
	var sessions []*impl.Session
	defer func() {
		for _, s := range sessions {
			s.Close(context.WithoutCancel(ctx))
		}
	}()
	open := func() (*impl.Session, error) {
		s, err := impl.NewSession(url)
		if err == nil {
			sessions = append(sessions, s)
		}
		return s, err
	}
	var ss [4]*impl.Session
	for i := range ss {
		var err error
		if ss[i], err = open(); err != nil {
			return Bare{}, err
		}
	}
	conn, err := ss[0].Conn(ctx)
	if err != nil {
		return Bare{}, err
	}
	if err := impl.Migrate(ctx, conn); err != nil {
		return Bare{}, err
	}
	if err := impl.Reset(ctx, conn); err != nil {
		return Bare{}, err
	}
	ids := &impl.SequentialIDs{}
	producer := &impl.Producer{Session: ss[1], IDs: ids}
	store := impl.NewStore(ss[2])
	consumer := &impl.Consumer{Session: ss[3]}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	start := time.Now()
	for i := range n {
		if _, err := producer.CreatePayment(ctx, impl.Payment{ID: fmt.Sprintf("bare-%d", i), MerchantID: "m", AmountCents: 1}, now); err != nil {
			return Bare{}, err
		}
		got, err := store.Claim(ctx, now, time.Minute, 1, ids.NewID())
		if err != nil || len(got) != 1 {
			return Bare{}, fmt.Errorf("claim: %v %v", got, err)
		}
		if _, err := store.MarkPublished(ctx, got[0].ID, got[0].ClaimID, now); err != nil {
			return Bare{}, err
		}
		if err := consumer.Handle(ctx, impl.MessageOf(got[0]), nil); err != nil {
			return Bare{}, err
		}
	}
	return Bare{Ops: 4 * n, Took: time.Since(start)}, nil
}
