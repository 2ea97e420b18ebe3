package loopcheck

import (
	"errors"
	"sync"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// shrinkAndConfirm shrinks res's failing schedule within the shrink time,
// on every runner of the pool, and runs the result Options.Confirm times.
// If it came back in fewer than all, steadiest looks for a story that
// comes back every time (see there).
func (p *pool) shrinkAndConfirm(res *Result, failedAt int, start time.Time) {
	opts := p.runners[0].opts
	sh := &shrinker{try: p.shrinkRun, workers: len(p.runners), interrupted: opts.interrupted, recovery: opts.Recovery,
		dispatchers: opts.Dispatchers, lease: opts.Lease, property: res.Failure.Property, tries: opts.Tries, until: time.Now().Add(harness.ShrinkTime()),
		best: res.Schedule, fail: res.Failure, outcomes: res.Outcomes, failedAt: failedAt}
	sh.shrink()
	res.ShrinkRuns, res.ShrinkDiscarded, res.ShrinkStopped = sh.runs, sh.discarded, sh.stopped
	res.ShrinkEnd = time.Since(start)
	res.Failure, res.Schedule, res.Outcomes = sh.fail, sh.best, sh.outcomes
	if res.ShrinkStopped == "interrupted" {
		res.Interrupted = true
		return
	}
	c := steadiest(sh.best, sh.steadier(sh.best), sh.earlier, func(s Schedule) confirmed {
		return p.confirm(s, sh.property, opts.Confirm)
	})
	res.Schedule, res.Reproduced, res.Confirmations = c.s, c.m, c.n
	if c.last != nil {
		res.Failure, res.Outcomes = c.last, c.outcomes
	}
	res.Interrupted = errors.Is(c.err, errInterrupted)
	res.Flaky = c.err == nil && c.m == 0
}

// steadiest confirms best, and while what it keeps came back in fewer
// than all of its runs, tries more:
//
//   - first the same story told without its races (steadier), in order,
//     each kept if it comes back more often;
//   - then the schedules best replaced while shrinking (earlier, longest
//     first), from the last, maxFallbacks at most: the last shrink steps
//     may have been lucky runs, as when a deletion turns a cold start
//     (which never races) into a bare commit that races the relay's
//     first start and fails half the time. Each is kept if it comes back
//     more often: a longer story that replays every time is worth more to
//     whoever replays it than a shorter one that may not.
//
// It stops at the first that comes back every time, or at a run's error.
func steadiest(best Schedule, steadier, earlier []Schedule, confirm func(Schedule) confirmed) confirmed {
	c := confirm(best)
	sure := func() bool { return c.err != nil || c.m == c.n }
	for _, v := range steadier {
		if sure() {
			return c
		}
		if c2 := confirm(v); c2.err == nil && c2.m > c.m {
			c = c2
		}
	}
	for i, tried := len(earlier)-1, 0; i >= 0 && tried < maxFallbacks && !sure(); i, tried = i-1, tried+1 {
		if c2 := confirm(earlier[i]); c2.err == nil && c2.m > c.m {
			c = c2
		}
	}
	return c
}

// maxFallbacks is how many earlier schedules steadiest confirms, at most.
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
