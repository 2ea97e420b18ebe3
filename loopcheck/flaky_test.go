package loopcheck_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// onceDouble is the reference whose Effects, once in the whole run,
// reports an event twice: a failure that never comes back.
type onceDouble struct {
	*refloop.Subject
	calls *atomic.Int64
}

func (s onceDouble) Effects(ctx context.Context) (map[string]int, error) {
	fx, err := s.Subject.Effects(ctx)
	if err == nil && s.calls.Add(1) == 3 {
		fx["00000000-0000-4000-8000-00000000dead"] = 2
	}
	return fx, err
}

// A failure rapid cannot reproduce while shrinking is reported as flaky,
// in its own words, with the property, the message and the story of the
// run that failed; the Result comes back all the same.
func TestFlakyFailureTellsItsStory(t *testing.T) {
	restore := harness.Budget{Checks: 5, Seed: 1, ShrinkTime: 5 * time.Second}.Apply()
	defer restore()
	calls := &atomic.Int64{}
	newSubject := func(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
		s, err := refloop.Build(ctx, env, refloop.Options{Notify: true})
		return onceDouble{s, calls}, err
	}
	rec := harness.NewRecorder(t.Name(), nil)
	res := loopcheck.Run(rec, newSubject, loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL})
	if !res.Flaky || res.Failure == nil {
		t.Fatalf("flaky %v, failure %+v\n%s", res.Flaky, res.Failure, rec.Output())
	}
	story := res.Story()
	for _, want := range []string{"property violated: effect-at-most-once", "took effect 2 times", "flaky:", "run 5 times more", "counterexample (", "TimeZone"} {
		if !strings.Contains(story, want) {
			t.Errorf("the story lacks %q:\n%s", want, story)
		}
	}
	t.Log(story)
}
