package loopcheck

import (
	"errors"
	"slices"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// shrinker shortens a failing schedule on real time, where a run of the
// same schedule may pass or fail as the subject's goroutines race the
// harness. Honestly so:
//
//   - a candidate counts as failing if, run up to Tries times, it fails at
//     least once with the same property (another property, or
//     infrastructure trouble, does not count: the candidate is dropped);
//   - before anything else it tries the failure's canonical shapes, which
//     do not race (shapes): a story that waits for the subject to settle
//     before each fault replays every time;
//   - with them, the schedule's first and last 2, 4, 8... steps (ends);
//     then it removes every step of one kind at a time (dropKinds);
//   - then it deletes chunks of steps (delta debugging, Zeller and
//     Hildebrandt 2002), halving the chunk until single steps, and makes
//     each remaining step simpler (simplify), while either helps;
//   - it runs as many candidates at once as it has workers (the pool's
//     runners), and takes the first in its list to fail: those after it
//     are abandoned, those before it waited for;
//   - it stops at the shrink deadline, a run in progress included (the
//     runner abandons it), and keeps the last schedule that failed.
//
// Run confirms the result Confirm times afterwards: "reproduced m of n".
type shrinker struct {
	// try runs a schedule once on worker w: its failure (nil if it
	// passed), the step whose check found it (0: the judge's end), the
	// end state, or the infrastructure error that ended it. A run past
	// until, or after abort closes, is abandoned: errInterrupted.
	try         func(w int, s Schedule, until time.Time, abort chan struct{}) (f *harness.Failure, failedAt int, outcomes []harness.PaymentOutcome, err error)
	workers     int
	interrupted func() bool
	// recovery, dispatchers and lease are the subject's, for the shapes.
	recovery    time.Duration
	dispatchers int
	lease       time.Duration
	property    string
	tries       int
	until       time.Time
	// best is the shortest schedule seen failing, fail its failure and
	// outcomes its end state.
	best     Schedule
	fail     *harness.Failure
	outcomes []harness.PaymentOutcome
	// failedAt is the step whose check found the failure (from 1), or 0
	// when the judge found it after the steps.
	failedAt int
	// earlier are the schedules best replaced, longest first: a candidate
	// that failed once may have been lucky, and Run falls back on them
	// when the last comes back too rarely.
	earlier []Schedule
	// runs counts schedule runs, discarded candidates that met
	// infrastructure trouble, and stopped says why shrinking ended early
	// ("" when it ran its course).
	runs      int
	discarded int
	stopped   string
}

// out says whether shrinking must stop: the deadline passed, or the run
// was interrupted.
func (sh *shrinker) out() bool {
	switch {
	case sh.stopped != "":
		return true
	case sh.interrupted():
		sh.stopped = "interrupted"
	case !time.Now().Before(sh.until):
		sh.stopped = "out of shrink time"
	}
	return sh.stopped != ""
}

// tried is one candidate's end: it failed with the property (ok), in
// runs runs, discarded if one met infrastructure trouble.
type tried struct {
	i, w      int
	ok        bool
	f         *harness.Failure
	failedAt  int
	outcomes  []harness.PaymentOutcome
	runs      int
	discarded bool
}

// tryOne runs candidate s on worker w up to sh.tries times, until one
// run fails with the property.
func (sh *shrinker) tryOne(w int, s Schedule, abort chan struct{}) (t tried) {
	t.w = w
	for range sh.tries {
		select {
		case <-abort:
			return t
		default:
		}
		if !time.Now().Before(sh.until) || sh.interrupted() {
			return t
		}
		t.runs++
		f, at, outcomes, err := sh.try(w, s, sh.until, abort)
		switch {
		case errors.Is(err, errInterrupted):
			return t
		case err != nil:
			t.discarded = true
			return t
		case f != nil && f.Property == sh.property:
			t.ok, t.f, t.failedAt, t.outcomes = true, f, at, outcomes
			return t
		}
	}
	return t
}

// first tries cands, as many at once as sh has workers, in order, and
// returns the index of the first in that order to fail with the
// property (which becomes sh.best), or -1. Once one fails, none after it
// starts and those after it that are running are abandoned; those
// before it that are running are waited for, so that a candidate listed
// first (a canonical shape, a shorter end) wins over one that merely
// failed sooner.
func (sh *shrinker) first(cands []Schedule) int {
	results := make(chan tried)
	aborts := make([]chan struct{}, len(cands))
	free := make([]int, 0, max(sh.workers, 1))
	for w := range max(sh.workers, 1) {
		free = append(free, w)
	}
	var best tried
	won, next, inflight := -1, 0, 0
	for {
		for won < 0 && len(free) > 0 && next < len(cands) && !sh.out() {
			if len(cands[next]) == 0 {
				next++
				continue
			}
			w := free[len(free)-1]
			free = free[:len(free)-1]
			i := next
			next++
			inflight++
			abort := make(chan struct{}) // the goroutine's own: aborts[i] is cleared once closed
			aborts[i] = abort
			go func() {
				t := sh.tryOne(w, cands[i], abort)
				t.i = i
				results <- t
			}()
		}
		if inflight == 0 {
			break
		}
		t := <-results
		inflight--
		free = append(free, t.w)
		sh.runs += t.runs
		if t.discarded {
			sh.discarded++
		}
		if t.ok && (won < 0 || t.i < won) {
			won, best = t.i, t
			for j := won + 1; j < next; j++ {
				if aborts[j] != nil {
					close(aborts[j])
					aborts[j] = nil
				}
			}
		}
	}
	if won >= 0 {
		sh.earlier = append(sh.earlier, sh.best)
		sh.best, sh.fail, sh.outcomes, sh.failedAt = cands[won], best.f, best.outcomes, best.failedAt
		sh.truncate()
	}
	return won
}

// fails says whether s fails with the property (first, of one).
func (sh *shrinker) fails(s Schedule) bool { return sh.first([]Schedule{s}) == 0 }

// shrink shortens sh.best as far as the deadline allows.
func (sh *shrinker) shrink() {
	sh.truncate()
	if sh.first(append(sh.shapes(), sh.ends()...)) >= 0 {
		for sh.first(sh.ends()) >= 0 {
		}
	}
	for sh.dropKinds() {
	}
	for !sh.out() {
		deleted := sh.deleteChunks()
		simpler := sh.simplify()
		if !deleted && !simpler {
			return
		}
	}
}

// truncate drops the steps after the one whose check found the failure:
// they never ran, so the failing run is a run of the shorter schedule
// too, and no run is needed to say so.
func (sh *shrinker) truncate() {
	if n := sh.failedAt; n > 0 && n < len(sh.best) {
		sh.best = sh.best[:n]
	}
}

// ends are the schedule's first and last 2, 4, 8... steps, shortest
// first: a drawn schedule goes on long after what broke (or, for a
// failure a step's check found, began long before it), and a short one
// runs in a fraction of the time, so the shortest that fails usually
// ends first and wins. A failure a step's check found starts with that
// step alone (in the schedule's time zone): a crash loop, a strand or a
// head-of-line step commits what it judges itself.
func (sh *shrinker) ends() []Schedule {
	var cands []Schedule
	if n := len(sh.best); sh.failedAt > 0 && n > 1 {
		alone := Schedule{}
		if z := sh.best.zone(); z != "UTC" {
			alone = append(alone, Step{Kind: "timezone", Zone: z})
		}
		if alone = append(alone, sh.best[n-1]); len(alone) < n {
			cands = append(cands, alone)
		}
	}
	for n := 2; n < len(sh.best); n *= 2 {
		cands = append(cands, slices.Clone(sh.best[:n]), slices.Clone(sh.best[len(sh.best)-n:]))
	}
	return cands
}

// dropKinds removes every step of one kind at a time (every pause, every
// held transaction, every redelivery...), trying each kind the schedule
// has at once: a drawn schedule dwells on a few kinds (swarm), and a
// failure usually needs one or two of them. It goes first because its
// candidates are few and shorten a run the most (pauses are real time).
// Whether it removed one.
func (sh *shrinker) dropKinds() bool {
	var cands []Schedule
	if s := withoutIdleHeals(sh.best); len(s) < len(sh.best) {
		cands = append(cands, s) // first: the heals that healed nothing
	}
	seen := map[string]bool{}
	for _, st := range sh.best {
		if seen[st.Kind] || st.Settle {
			continue
		}
		seen[st.Kind] = true
		cand := slices.DeleteFunc(slices.Clone(sh.best), func(o Step) bool { return o.Kind == st.Kind && !o.Settle })
		if len(cand) > 0 {
			cands = append(cands, cand)
		}
	}
	return len(cands) > 0 && sh.first(cands) >= 0
}

// deleteChunks removes chunks of steps, from halves down to single
// steps, keeping each removal after which the schedule still fails.
// Whether any did.
func (sh *shrinker) deleteChunks() bool {
	progress := false
	for size := max(len(sh.best)/2, 1); size >= 1 && !sh.out(); {
		removed := false
		// From the end: later steps more often only add noise to a story
		// whose cause came early, and a failure's step stays in place.
		for end := len(sh.best); end > 0 && !sh.out(); {
			var cands []Schedule
			var starts []int
			for e := end; e > 0; e -= size {
				start := max(e-size, 0)
				if sh.pinned(start, e) {
					continue
				}
				cands = append(cands, append(append(Schedule{}, sh.best[:start]...), sh.best[e:]...))
				starts = append(starts, start)
			}
			j := sh.first(cands)
			if j < 0 {
				break
			}
			removed, progress, end = true, true, starts[j]
		}
		if !removed {
			size /= 2
		}
	}
	return progress
}

// pinned says whether best[start:end] holds a settle pause, which a
// shape put there so that the story does not race: deleting it would
// trade a story that replays for one a step shorter.
func (sh *shrinker) pinned(start, end int) bool {
	for _, st := range sh.best[start:end] {
		if st.Settle {
			return true
		}
	}
	return false
}

// simplify replaces each step, from the last, with a simpler one
// (simpler) while the schedule still fails. Whether any was.
func (sh *shrinker) simplify() bool {
	progress := false
	for from := len(sh.best) - 1; from >= 0 && !sh.out(); {
		var cands []Schedule
		var at []int
		for i := min(from, len(sh.best)-1); i >= 0; i-- {
			for _, st := range simpler(sh.best[i]) {
				cand := append(Schedule{}, sh.best...)
				cand[i] = st
				cands, at = append(cands, cand), append(at, i)
			}
		}
		j := sh.first(cands)
		if j < 0 {
			break
		}
		progress, from = true, at[j]
	}
	return progress
}

// withoutIdleHeals is s without the heals of a link nothing before them
// cut: no partition of it, and none of the steps that cut links of their
// own (a wedge, a strand, a window outage, a consumer's or the
// database's crash).
func withoutIdleHeals(s Schedule) Schedule {
	var out Schedule
	cut, cutsOwn := map[string]bool{}, false
	for _, st := range s {
		switch st.Kind {
		case "partition":
			cut[st.Link] = true
		case "wedge", "strand", "window-outage", "crash-consumer", "crash-db":
			cutsOwn = true
		case "heal":
			if !cut[st.Link] && !cutsOwn {
				continue
			}
		}
		out = append(out, st)
	}
	return out
}
