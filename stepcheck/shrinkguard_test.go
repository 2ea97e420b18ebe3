package stepcheck_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/impl/mutants"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// A violation, once found, is the verdict: infrastructure trouble that
// meets shrink candidates (here every other replay's reset times out on
// every try) discards those candidates, and the run still ends with the
// violation, its story a check that failed with it, never an
// infrastructure error.
func TestInfrastructureWhileShrinkingKeepsTheViolation(t *testing.T) {
	setFlag(t, "rapid.checks", "50")
	setFlag(t, "rapid.shrinktime", "20s")
	setFlag(t, "rapid.nofailfile", "true")
	var shrinking atomic.Bool
	newSubject := func(ctx context.Context, env stepcheck.Env) (stepcheck.Subject, error) {
		s, err := reference.Mutated(mutants.MarkPublishedBeforePublishing)(ctx, env)
		return &resetTrouble{Subject: s, on: &shrinking}, err
	}
	rec := harness.NewRecorder(t.Name(), nil)
	opts := stepcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, OnCheck: func(h *harness.History) {
		shrinking.Store(shrinking.Load() || h.Shrinking)
	}}
	sum := stepcheck.Run(rec, newSubject, opts)
	f := sum.Failure
	if f == nil || f.Infrastructure || f.Property != "no-loss" {
		t.Fatalf("failure %+v, want the violation of no-loss\n%s", f, rec.Output())
	}
	if sum.ShrinkDiscarded == 0 || !strings.Contains(sum.ShrinkStopped, "infrastructure trouble") {
		t.Fatalf("%d candidates discarded (stopped: %q): the trouble never met shrinking", sum.ShrinkDiscarded, sum.ShrinkStopped)
	}
	if es := f.History.Entries; len(es) == 0 {
		t.Fatalf("the story has %d steps:\n%s", len(es), f.History.Story())
	}
	if out := rec.Output(); strings.Contains(out, "flaky test") || strings.Contains(out, "infrastructure error:") {
		t.Fatalf("rapid's output reads as flaky or infrastructure:\n%s", out)
	}
	t.Logf("no-loss in %d steps; %d candidates discarded; %d shrink runs; stopped: %q", len(f.History.Entries), sum.ShrinkDiscarded, sum.ShrinkRuns, sum.ShrinkStopped)
}

// resetTrouble is a subject whose Reset times out, on every try, in every
// other check once shrinking has begun (on). The harness retries a reset
// after Crash(operator), so a Reset with no such crash before it begins a
// check.
type resetTrouble struct {
	stepcheck.Subject
	on     *atomic.Bool
	checks int
	retry  bool
}

func (s *resetTrouble) Crash(a harness.Actor) {
	s.retry = s.retry || a.Role == harness.Operator
	s.Subject.Crash(a)
}

func (s *resetTrouble) Reset(ctx context.Context) error {
	if !s.retry {
		s.checks++
	}
	s.retry = false
	if s.on.Load() && s.checks%2 == 0 {
		return fmt.Errorf("reset: %w", context.DeadlineExceeded)
	}
	return s.Subject.Reset(ctx)
}

// A shrink deadline bounds shrinking: candidates past it stop at their
// next step, and new ones do not start. Here, once shrinking has begun,
// every call of the subject's producer and dispatchers takes a second, so a
// candidate takes seconds: rapid, which looks at its deadline only between
// candidates, would finish the one in progress and then replay the
// counterexample twice more (for the fail file and for its output).
func TestShrinkTimeBoundsShrinking(t *testing.T) {
	const budget = 2 * time.Second
	setFlag(t, "rapid.checks", "50")
	setFlag(t, "rapid.shrinktime", budget.String())
	setFlag(t, "rapid.nofailfile", "true")
	var shrinking atomic.Bool
	newSubject := func(ctx context.Context, env stepcheck.Env) (stepcheck.Subject, error) {
		s, err := reference.Mutated(mutants.MarkPublishedBeforePublishing)(ctx, env)
		return &slowSubject{Subject: s, slow: &shrinking}, err
	}
	rec := harness.NewRecorder(t.Name(), nil)
	opts := stepcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, OnCheck: func(h *harness.History) {
		shrinking.Store(shrinking.Load() || h.Shrinking)
	}}
	sum := stepcheck.Run(rec, newSubject, opts)
	f := sum.Failure
	if f == nil || f.Property != "no-loss" || sum.First == nil {
		t.Fatalf("failure %+v, want no-loss\n%s", f, rec.Output())
	}
	spent := sum.ShrinkEnd - sum.First.Elapsed
	t.Logf("shrinking took %v of a %v budget, %d replays, stopped: %q; %d steps", spent.Round(time.Millisecond), budget, sum.ShrinkRuns, sum.ShrinkStopped, len(f.History.Entries))
	if !strings.Contains(rec.Output(), "shrinking stopped early") && sum.ShrinkStopped != "" {
		t.Errorf("shrinking stopped early, and the story was not printed:\n%s", rec.Output())
	}
	// The bound is the issue's: the budget and 5 s (the step in progress,
	// a second here, and its read-back). Not a speed test: on a slow machine
	// only the read-backs are slower.
	if limit := budget + 5*time.Second; spent > limit {
		t.Fatalf("shrinking took %v, past %v", spent, limit)
	}
}

// slowSubject takes a second before every call of its producer and
// dispatchers while slow is set.
type slowSubject struct {
	stepcheck.Subject
	slow *atomic.Bool
}

func (s *slowSubject) wait() {
	if s.slow.Load() {
		time.Sleep(time.Second)
	}
}

func (s *slowSubject) Commit(ctx context.Context, p harness.Payment, now time.Time) (string, error) {
	s.wait()
	return s.Subject.Commit(ctx, p, now)
}

func (s *slowSubject) Claim(ctx context.Context, d int, now time.Time, limit int) ([]stepcheck.Claimed, error) {
	s.wait()
	return s.Subject.Claim(ctx, d, now, limit)
}

func (s *slowSubject) Publish(ctx context.Context, d int, c stepcheck.Claimed, pub harness.Publisher) error {
	s.wait()
	return s.Subject.Publish(ctx, d, c, pub)
}

func (s *slowSubject) MarkPublished(ctx context.Context, d int, c stepcheck.Claimed, now time.Time) (bool, error) {
	s.wait()
	return s.Subject.MarkPublished(ctx, d, c, now)
}

// A shrink budget in replays (Options.MaxShrinkRuns) does not depend on
// the machine's speed: the same seed shrinks to the same counterexample.
// Here, stopped after a few replays, it is still the violation, and
// two runs give the same story.
func TestShrinkRunsBoundShrinking(t *testing.T) {
	setFlag(t, "rapid.checks", "50")
	setFlag(t, "rapid.seed", "5")
	setFlag(t, "rapid.nofailfile", "true")
	run := func() harness.Summary {
		rec := harness.NewRecorder(t.Name(), nil)
		return stepcheck.Run(rec, reference.Mutated(mutants.MarkPublishedBeforePublishing),
			stepcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, MaxShrinkRuns: 4})
	}
	a, b := run(), run()
	for _, s := range []harness.Summary{a, b} {
		if f := s.Failure; f == nil || f.Property != "no-loss" || s.ShrinkStopped != "the budget of 4 shrink replays ran out" {
			t.Fatalf("failure %+v, stopped %q: want no-loss, stopped by the budget", f, s.ShrinkStopped)
		}
	}
	if x, y := a.Failure.History.Story(), b.Failure.History.Story(); x != y {
		t.Fatalf("two runs of one seed shrank to different stories:\n%s\n--\n%s", x, y)
	}
	t.Logf("%d steps after 4 replays", len(a.Failure.History.Entries))
}

// Shrinking stopped by its deadline still leaves a fail file that replays
// the violation: rapid records its second run of a candidate that failed
// as the counterexample, so that run is never cut short (a fail file cut
// short replays nothing: "no longer valid"). Here every call takes a
// second in the check after a candidate that failed (rapid's second run
// of it), so the shrink deadline falls inside the first such run.
func TestStoppedShrinkingLeavesAFailFileThatReplays(t *testing.T) {
	t.Chdir(t.TempDir()) // rapid writes testdata/rapid/<test>/*.fail here
	setFlag(t, "rapid.checks", "50")
	setFlag(t, "rapid.shrinktime", "3s")
	setFlag(t, "rapid.nofailfile", "false")
	var slow atomic.Bool
	newSubject := func(ctx context.Context, env stepcheck.Env) (stepcheck.Subject, error) {
		s, err := reference.Mutated(mutants.MarkPublishedBeforePublishing)(ctx, env)
		return &slowSubject{Subject: s, slow: &slow}, err
	}
	db := pgscratch.NewDatabase(t).URL
	rec := harness.NewRecorder(t.Name(), nil)
	replays := 0 // the first is rapid's reproduction, then candidates
	sum := stepcheck.Run(rec, newSubject, stepcheck.Options{DatabaseURL: db, OnCheck: func(h *harness.History) {
		if h.Shrinking {
			replays++
		}
		failed := slices.ContainsFunc(h.Entries, func(e harness.Entry) bool { return e.Expect != "" })
		slow.Store(replays >= 2 && failed)
	}})
	if f := sum.Failure; f == nil || f.Property != "no-loss" || sum.ShrinkStopped == "" {
		t.Fatalf("failure %+v, stopped %q: want no-loss, shrinking stopped by its deadline\n%s", f, sum.ShrinkStopped, rec.Output())
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "rapid", "*", "*.fail"))
	if len(files) != 1 {
		t.Fatalf("fail files %v, want one", files)
	}
	slow.Store(false)
	setFlag(t, "rapid.failfile", files[0])
	again := harness.NewRecorder(t.Name(), nil)
	sum2 := stepcheck.Run(again, newSubject, stepcheck.Options{DatabaseURL: db, MaxChecks: 1})
	if out := again.Output(); strings.Contains(out, "no longer valid") || strings.Contains(out, "ignoring fail file") {
		t.Fatalf("the fail file does not replay:\n%s", out)
	}
	if f := sum2.Failure; f == nil || f.Property != "no-loss" || f.History.Story() != sum.Failure.History.Story() {
		t.Fatalf("replay: %+v, want the same no-loss story:\n%s", f, sum.Failure.History.Story())
	}
	t.Logf("stopped: %q after %d replays; the fail file replays its %d steps", sum.ShrinkStopped, sum.ShrinkRuns, len(sum.Failure.History.Entries))
}
