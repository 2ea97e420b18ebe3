package soak

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// callTimeout bounds every call of the soak's loops.
const callTimeout = time.Second

var errCrash = errors.New("consumer crashed at failpoint")

// round is one load period followed by a drain and the end-state check.
type round struct {
	subj stepcheck.Subject
	net  *faults.Net
	env  stepcheck.Env
	clk  clock
	bro  broker

	mu         sync.Mutex
	paid       map[string]bool // committed payments
	maybe      map[string]bool // commits whose outcome is unknown
	aggregates map[string]string
	crash      []atomic.Bool // crash requests, one per dispatcher

	problem string
}

func newRound(subj stepcheck.Subject, net *faults.Net, env stepcheck.Env) *round {
	r := &round{subj: subj, net: net, env: env, paid: map[string]bool{}, maybe: map[string]bool{},
		aggregates: map[string]string{}, crash: make([]atomic.Bool, env.Dispatchers)}
	r.clk.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return r
}

func (r *round) call(ctx context.Context, fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return fn(ctx)
}

func (r *round) run(ctx context.Context, d time.Duration) error {
	if err := r.call(ctx, r.subj.Reset); err != nil {
		return fmt.Errorf("soak: reset: %w", err)
	}
	load, stop := context.WithTimeout(ctx, d)
	var wg sync.WaitGroup
	wg.Go(func() { r.produce(load) })
	for i := range r.env.Dispatchers {
		wg.Go(func() { r.dispatch(load, i, false) })
	}
	for i := range r.env.Consumers {
		wg.Go(func() { r.consume(load, i, true) })
	}
	wg.Go(func() { r.tick(load) })
	wg.Go(func() { r.rotate(load) })
	wg.Wait()
	stop()
	return r.drainAndCheck(ctx)
}

func every(ctx context.Context, d time.Duration, fn func(i int)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for i := 0; ; i++ {
		fn(i)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (r *round) tick(ctx context.Context) {
	every(ctx, 20*time.Millisecond, func(int) { r.clk.advance(5 * time.Second) })
}

// rotate is the fixed fault schedule: every 150 ms the next fault kind on
// the next link, healed 150 ms later; every fourth turn a dispatcher crash.
func (r *round) rotate(ctx context.Context) {
	links := r.faultLinks()
	every(ctx, 150*time.Millisecond, func(i int) {
		if i%4 == 3 {
			r.crash[i/4%len(r.crash)].Store(true)
		}
		if r.net == nil {
			return
		}
		prev := links[(i+len(links)-1)%len(links)]
		r.net.Heal(prev)
		kind := faults.All[i%len(faults.All)]
		_ = r.net.Inject(links[i%len(links)], faults.Fault{Kind: kind, After: i % 4, DelayMs: 20, AtCommit: i%2 == 0})
	})
}

func (r *round) faultLinks() []string {
	out := []string{harness.Actor{Role: harness.Producer}.String()}
	for i := range r.env.Dispatchers {
		out = append(out, harness.Actor{Role: harness.Dispatcher, N: i}.String())
	}
	for i := range r.env.Consumers {
		out = append(out, harness.Actor{Role: harness.Consumer, N: i}.String())
	}
	return out
}

func (r *round) produce(ctx context.Context) {
	every(ctx, 5*time.Millisecond, func(i int) {
		pay := harness.Payment{ID: fmt.Sprintf("pay-%d", i), MerchantID: fmt.Sprintf("m-%d", i%3), AmountCents: int64(100 + i)}
		if i%5 == 4 {
			_ = r.call(ctx, func(ctx context.Context) error { return r.subj.Rollback(ctx, pay, r.clk.now()) })
			return
		}
		err := r.call(ctx, func(ctx context.Context) error {
			_, err := r.subj.Commit(ctx, pay, r.clk.now())
			return err
		})
		r.mu.Lock()
		defer r.mu.Unlock()
		switch {
		case err == nil:
			r.paid[pay.ID] = true
		case r.subj.Indeterminate(err):
			r.maybe[pay.ID] = true
		}
	})
}

// dispatch is one dispatcher's loop: claim, publish, mark. In the drain
// (once) it returns when nothing is due.
func (r *round) dispatch(ctx context.Context, d int, once bool) (claimed int) {
	actor := harness.Actor{Role: harness.Dispatcher, N: d}
	for ctx.Err() == nil {
		if r.crash[d].Swap(false) {
			r.subj.Crash(actor)
		}
		var cs []stepcheck.Claimed
		err := r.call(ctx, func(ctx context.Context) error {
			var err error
			cs, err = r.subj.Claim(ctx, d, r.clk.now(), 3)
			return err
		})
		claimed += len(cs)
		for _, c := range cs {
			if r.crash[d].Swap(false) { // killed holding claims: they wait for their lease
				r.subj.Crash(actor)
				break
			}
			perr := r.call(ctx, func(ctx context.Context) error { return r.subj.Publish(ctx, d, c, &r.bro) })
			_ = r.call(ctx, func(ctx context.Context) error {
				var err error
				if perr == nil {
					_, err = r.subj.MarkPublished(ctx, d, c, r.clk.now())
				} else {
					_, err = r.subj.MarkFailed(ctx, d, c, r.clk.now(), perr)
				}
				return err
			})
		}
		if once {
			return claimed
		}
		if err != nil || len(cs) == 0 {
			sleep(ctx, 10*time.Millisecond)
		}
	}
	return claimed
}

// consume is one consumer's loop; every ninth message it crashes at a
// failpoint, alternately before and after its commit. In the drain
// (crashes false) it makes one sweep over the queue as it stands.
func (r *round) consume(ctx context.Context, c int, crashes bool) {
	actor := harness.Actor{Role: harness.Consumer, N: c}
	sweep := r.bro.len()
	for n := 0; ctx.Err() == nil; {
		if !crashes && n == sweep {
			return
		}
		m, ok := r.bro.take()
		if !ok {
			if !crashes {
				return
			}
			sleep(ctx, 5*time.Millisecond)
			continue
		}
		n++
		r.mu.Lock()
		r.aggregates[m.ID] = m.AggregateID
		r.mu.Unlock()
		crashAt := harness.Failpoint("")
		if crashes && n%9 == 0 {
			crashAt = []harness.Failpoint{harness.BeforeCommit, harness.AfterCommit}[n/9%2]
		}
		err := r.call(ctx, func(ctx context.Context) error {
			return r.subj.Handle(ctx, c, m, func(p harness.Failpoint) error {
				if p == crashAt {
					return errCrash
				}
				return nil
			})
		})
		if err != nil {
			if errors.Is(err, errCrash) {
				r.subj.Crash(actor)
			}
			r.bro.requeue(m)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// drainAndCheck heals everything, redrives DEAD events as an operator
// would, dispatches and delivers until quiet, then checks the end state.
func (r *round) drainAndCheck(ctx context.Context) error {
	links := r.faultLinks()
	for _, l := range links {
		if r.net != nil {
			r.net.Heal(l)
		}
	}
	for i := range r.env.Dispatchers {
		r.subj.Crash(harness.Actor{Role: harness.Dispatcher, N: i})
		r.crash[i].Store(false)
	}
	for i := range r.env.Consumers {
		r.subj.Crash(harness.Actor{Role: harness.Consumer, N: i})
	}
	r.subj.Crash(harness.Actor{Role: harness.Producer})
	quiet := 0
	for pass := 0; pass < 200 && quiet < 2; pass++ {
		r.clk.advance(30 * time.Minute)
		if err := r.redriveDead(ctx); err != nil {
			return err
		}
		claimed := 0
		for d := range r.env.Dispatchers {
			claimed += r.dispatch(ctx, d, true)
		}
		for c := range r.env.Consumers {
			r.consume(ctx, c, false)
		}
		if claimed == 0 && r.bro.empty() {
			quiet++
		} else {
			quiet = 0
		}
	}
	if n := r.bro.len(); n > 0 {
		r.problem = fmt.Sprintf("stuck: %d messages still fail every delivery after the drain", n)
		return nil
	}
	return r.check(ctx)
}

func (r *round) redriveDead(ctx context.Context) error {
	var rows []stepcheck.Row
	if err := r.call(ctx, func(ctx context.Context) (err error) { rows, err = r.subj.Rows(ctx); return err }); err != nil {
		return fmt.Errorf("soak: read rows: %w", err)
	}
	for _, row := range rows {
		if row.Status == "DEAD" {
			if err := r.call(ctx, func(ctx context.Context) error {
				_, err := r.subj.Redrive(ctx, row.ID, r.clk.now())
				return err
			}); err != nil {
				return fmt.Errorf("soak: redrive: %w", err)
			}
		}
	}
	return nil
}

// check is the whole of the baseline's judgement: per payment, the
// business effect happened exactly once if committed, at most once if the
// commit's outcome is unknown, never if rolled back.
func (r *round) check(ctx context.Context) error {
	var effects map[string]int
	if err := r.call(ctx, func(ctx context.Context) (err error) { effects, err = r.subj.Effects(ctx); return err }); err != nil {
		return fmt.Errorf("soak: read effects: %w", err)
	}
	perPayment := map[string]int{}
	for id, n := range effects {
		if n > 1 {
			r.problem = fmt.Sprintf("duplicate: event %s took effect %d times", id, n)
			return nil
		}
		perPayment[r.aggregates[id]] += n
	}
	for _, pay := range slices.Sorted(maps.Keys(perPayment)) {
		n := perPayment[pay]
		switch {
		case n > 1:
			r.problem = fmt.Sprintf("duplicate: payment %s took effect %d times", pay, n)
		case !r.paid[pay] && !r.maybe[pay]:
			r.problem = fmt.Sprintf("phantom: payment %s took effect but was never committed", pay)
		}
		if r.problem != "" {
			return nil
		}
	}
	for _, pay := range slices.Sorted(maps.Keys(r.paid)) {
		if perPayment[pay] == 0 {
			r.problem = fmt.Sprintf("lost: payment %s was committed but never took effect", pay)
			return nil
		}
	}
	return nil
}
