package refloop

import (
	"context"
	"sync"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/impl"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// Graceful is the reference loop with a stop of its own
// (loopcheck.Stopper), as libraries have a Close: Stop lets the batch in
// progress end at its next event, leaves the events it did not send
// claimed (their lease runs out, and another relay takes them), and ends
// the loop. Correct.
func Graceful(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	return newGraceful(ctx, env, false)
}

// CloseAcksUnsent is a loop mutant: Graceful whose stop "flushes" the
// batch in progress by marking every event it had not sent yet
// published, as a library's Close that acks its buffer without sending
// it. no-loss kills it.
func CloseAcksUnsent(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	return newGraceful(ctx, env, true)
}

func newGraceful(ctx context.Context, env loopcheck.Env, ackUnsent bool) (loopcheck.Subject, error) {
	s, err := Build(ctx, env, Options{Notify: true})
	if err != nil {
		return s, err
	}
	return &graceful{Subject: s, ackUnsent: ackUnsent, stops: map[int]*stopping{}}, nil
}

type graceful struct {
	*Subject
	ackUnsent bool
	mu        sync.Mutex
	stops     map[int]*stopping // dispatcher → its running incarnation's
}

// stopping is one incarnation's stop: asked is closed by Stop; batch is
// held while a batch runs, so the loop ends between batches.
type stopping struct {
	asked chan struct{}
	once  sync.Once
	batch sync.Mutex
}

func (g *graceful) Dispatch(ctx context.Context, i int, pub harness.Publisher) error {
	st := &stopping{asked: make(chan struct{})}
	g.mu.Lock()
	g.stops[i] = st
	g.mu.Unlock()
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-st.asked:
			st.batch.Lock() // the batch in progress ends first
			cancel()
			st.batch.Unlock()
		case <-lctx.Done():
		}
	}()
	return g.dispatch(lctx, i, pub, func(d *impl.Dispatcher) func(context.Context, int) (int, []error) { return g.step(d, st) })
}

// Stop asks dispatcher i's incarnation to stop.
func (g *graceful) Stop(_ context.Context, i int) error {
	g.mu.Lock()
	st := g.stops[i]
	g.mu.Unlock()
	if st != nil {
		st.once.Do(func() { close(st.asked) })
	}
	return nil
}

// step is the reference's batch, one event at a time, ending at the next
// event once a stop is asked.
func (g *graceful) step(d *impl.Dispatcher, st *stopping) func(ctx context.Context, limit int) (int, []error) {
	return func(ctx context.Context, limit int) (int, []error) {
		st.batch.Lock()
		defer st.batch.Unlock()
		if stopAsked(st) {
			return 0, nil
		}
		events, err := d.Claim(ctx, limit)
		if err != nil {
			return 0, []error{err}
		}
		var errs []error
		for k, ev := range events {
			if stopAsked(st) {
				if g.ackUnsent {
					for _, rest := range events[k:] { // "flushed": the bug
						_, _ = d.MarkPublished(ctx, rest)
					}
				}
				return len(events), errs
			}
			if err := d.Publish(ctx, ev); err != nil {
				_, _ = d.MarkFailed(ctx, ev, err)
				errs = append(errs, err)
				continue
			}
			if _, err := d.MarkPublished(ctx, ev); err != nil {
				errs = append(errs, err)
			}
		}
		return len(events), errs
	}
}

func stopAsked(st *stopping) bool {
	select {
	case <-st.asked:
		return true
	default:
		return false
	}
}
