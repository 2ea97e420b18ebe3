package loopcheck

import (
	"errors"
	"sync"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// shrinkAndConfirm shrinks res's failing schedule within the shrink time,
// on every runner of the pool, and runs the result Options.Confirm times.
// If it came back in fewer than all, the same story told without its
// races (steadier) is confirmed too, and kept if it comes back more
// often: a story that raced the subject becomes one that does not; if it
// still comes back less than half the time, so are the schedules it
// replaced, from the last.
func (p *pool) shrinkAndConfirm(res *Result, failedAt int, start time.Time) {
	opts := p.runners[0].opts
	sh := &shrinker{try: p.shrinkRun, workers: len(p.runners), interrupted: opts.interrupted, recovery: opts.Recovery,
		dispatchers: opts.Dispatchers, property: res.Failure.Property, tries: opts.Tries, until: time.Now().Add(harness.ShrinkTime()),
		best: res.Schedule, fail: res.Failure, outcomes: res.Outcomes, failedAt: failedAt}
	sh.shrink()
	res.ShrinkRuns, res.ShrinkDiscarded, res.ShrinkStopped = sh.runs, sh.discarded, sh.stopped
	res.ShrinkEnd = time.Since(start)
	res.Failure, res.Schedule, res.Outcomes = sh.fail, sh.best, sh.outcomes
	if res.ShrinkStopped == "interrupted" {
		res.Interrupted = true
		return
	}
	c := p.confirm(sh.best, sh.property, opts.Confirm)
	for _, v := range sh.steadier(sh.best) {
		if c.err != nil || c.m == c.n {
			break
		}
		if c2 := p.confirm(v, sh.property, opts.Confirm); c2.err == nil && c2.m > c.m {
			c = c2
		}
	}
	// Still back less than half the time: the last shrink steps may have
	// been lucky runs. Walk back through what they replaced, a few at
	// most, and keep the first that comes back at least half the time
	// (or the one that came back most).
	for i, tried := len(sh.earlier)-1, 0; i >= 0 && tried < maxFallbacks && c.err == nil && 2*c.m < c.n; i, tried = i-1, tried+1 {
		if c2 := p.confirm(sh.earlier[i], sh.property, opts.Confirm); c2.err == nil && c2.m > c.m {
			c = c2
		}
	}
	res.Schedule, res.Reproduced, res.Confirmations = c.s, c.m, c.n
	if c.last != nil {
		res.Failure, res.Outcomes = c.last, c.outcomes
	}
	res.Interrupted = errors.Is(c.err, errInterrupted)
	res.Flaky = c.err == nil && c.m == 0
}

// maxFallbacks is how many earlier schedules shrinkAndConfirm confirms,
// at most, when the shrunk one comes back less than half the time.
const maxFallbacks = 3

// shrinkRun runs s on runner w as a shrink candidate, abandoned at until
// or when abort closes, and shows its story to Options.OnCheck.
func (p *pool) shrinkRun(w int, s Schedule, until time.Time, abort chan struct{}) (*harness.Failure, int, []harness.PaymentOutcome, error) {
	r := p.runners[w]
	r.until, r.abort = until, abort
	defer func() { r.until, r.abort = time.Time{}, nil }()
	f, err := r.run(s)
	if r.opts.OnCheck != nil && err == nil {
		h := r.story
		h.Shrinking = true
		p.onCheck(r.opts.OnCheck, &h)
	}
	return f, r.failedAt, r.outcomes, err
}

// onCheck calls fn with h, one call at a time.
func (p *pool) onCheck(fn func(*harness.History), h *harness.History) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fn(h)
}

// confirmed is what confirm found: m of n runs of s failed with the
// property, the last of them with last and its end state outcomes; err
// ended the runs early.
type confirmed struct {
	s        Schedule
	m, n     int
	last     *harness.Failure
	outcomes []harness.PaymentOutcome
	err      error
}

// confirm runs s n times, on every runner at once, and counts the runs
// that fail with property.
func (p *pool) confirm(s Schedule, property string, n int) confirmed {
	c := confirmed{s: s}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		next int
	)
	for _, r := range p.runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next == n || c.err != nil || r.opts.interrupted() {
					if c.err == nil && next < n {
						c.err = errInterrupted
					}
					mu.Unlock()
					return
				}
				next++
				mu.Unlock()
				f, err := r.run(s)
				mu.Lock()
				switch {
				case err != nil:
					c.err = errors.Join(c.err, err)
				case f != nil && f.Property == property:
					c.n++
					c.m, c.last, c.outcomes = c.m+1, f, r.outcomes
				default:
					c.n++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return c
}
