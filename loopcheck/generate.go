package loopcheck

import (
	"errors"
	"sync"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// generation runs the schedules rapid draws, several at once on a pool's
// runners, and keeps what the first failure in seed order needs: the
// schedules drawn before it are all run to their end, those after it are
// abandoned. With one runner it is the plain loop: draw, run, judge.
type generation struct {
	p     *pool
	opts  Options
	start time.Time
	free  chan *runner
	wg    sync.WaitGroup

	mu      sync.Mutex
	drawn   int             // schedules handed out, numbered from 1
	running map[int]*runner // by number
	aborted map[int]bool    // running ones told to stop
	ran     map[int]ran     // finished, by number
	failed  int             // the lowest number that failed, 0 none
	order   []int           // numbers in the order they finished
}

// ran is one generated schedule's end.
type ran struct {
	s        Schedule
	f        *harness.Failure
	failedAt int
	outcomes []harness.PaymentOutcome
	err      error
	end      time.Duration // since the run's start
	point    harness.Checkpoint
	judged   judged // folded into the run's tally only if it counts (wait)
}

func newGeneration(p *pool, opts Options, start time.Time) *generation {
	g := &generation{p: p, opts: opts, start: start, free: make(chan *runner, len(p.runners)),
		running: map[int]*runner{}, aborted: map[int]bool{}, ran: map[int]ran{}}
	for _, r := range p.runners {
		g.free <- r
	}
	return g
}

// done says no more schedules should run: one failed (or met
// infrastructure trouble).
func (g *generation) done() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.failed != 0
}

// submit runs s on the next free runner, waiting for one; false if the
// run was interrupted or a failure came meanwhile.
func (g *generation) submit(s Schedule) bool {
	var r *runner
	select {
	case r = <-g.free:
	case <-g.opts.Interrupt:
		return false
	}
	g.mu.Lock()
	if g.failed != 0 {
		g.mu.Unlock()
		g.free <- r
		return false
	}
	g.drawn++
	n := g.drawn
	r.abort = make(chan struct{})
	g.running[n] = r
	g.mu.Unlock()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f, err := r.run(s)
		g.finish(n, r, ran{s: s, f: f, failedAt: r.failedAt, outcomes: r.outcomes, err: err, judged: r.judged})
		g.free <- r
	}()
	return true
}

// finish records schedule n's end; a failure abandons every schedule
// drawn after it.
func (g *generation) finish(n int, r *runner, x ran) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.running, n)
	r.abort = nil
	if errors.Is(x.err, errInterrupted) {
		return // abandoned: neither run nor passed
	}
	if g.opts.OnCheck != nil && x.err == nil {
		h := r.story
		g.opts.OnCheck(&h)
	}
	x.end = time.Since(g.start)
	var now harness.Summary
	g.p.runners[0].summarize(&now)
	injected, struck := now.Faults()
	x.point = harness.Checkpoint{Check: n, Elapsed: x.end, Steps: len(x.s), Faults: injected, Struck: struck}
	g.ran[n] = x
	g.order = append(g.order, n)
	if (x.f != nil || x.err != nil) && (g.failed == 0 || n < g.failed) {
		g.failed = n
		for m, o := range g.running {
			if m > n && !g.aborted[m] {
				g.aborted[m] = true
				close(o.abort)
			}
		}
	}
}

// wait waits for every schedule running, and fills res: the schedules
// run up to the first failure in seed order, their progress, and that
// failure (a violation before any infrastructure error: a violation found
// is never replaced by a later error).
func (g *generation) wait(res *Result) (failedAt int) {
	g.wg.Wait()
	cut := g.failed
	if v := g.firstViolation(); v != 0 {
		cut = v
	}
	for _, n := range g.order {
		x := g.ran[n]
		if cut != 0 && n > cut {
			continue
		}
		res.Checks++
		res.Steps += len(x.s)
		g.p.runners[0].tally.fold(x.judged) // as the steps: none of a schedule after the failure
		x.point.Check = res.Checks          // in the order they ended
		res.Progress = append(res.Progress, x.point)
	}
	if cut == 0 {
		return 0
	}
	x := g.ran[cut]
	res.Schedule = x.s
	if x.err != nil {
		res.Failure = infraOrSubject(x.err)
		return 0
	}
	res.First = &harness.FirstFailure{Check: cut, Elapsed: x.end}
	res.Failure, res.Outcomes = x.f, x.outcomes
	return x.failedAt
}

// firstViolation is the lowest-numbered schedule that found a violation,
// 0 if none did.
func (g *generation) firstViolation() int {
	first := 0
	for n, x := range g.ran {
		if x.f != nil && (first == 0 || n < first) {
			first = n
		}
	}
	return first
}
