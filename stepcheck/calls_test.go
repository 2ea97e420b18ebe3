package stepcheck_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// brokenRedrive is the reference with a redrive that never works: it
// always runs into its deadline (an error of its own would make the run a
// subject error; a timeout is not the subject's own doing, so the run
// passes, and says so).
type brokenRedrive struct{ stepcheck.Subject }

func (brokenRedrive) Redrive(context.Context, string, time.Time) (bool, error) {
	return false, fmt.Errorf("redrive: lock wait: %w", context.DeadlineExceeded)
}

// A kind of call that never succeeded is called out, with its first
// error, while the run still passes: before, a redrive that always failed
// passed 150 checks without a word.
func TestNeverSucceededIsCalledOut(t *testing.T) {
	setFlag(t, "rapid.checks", "40")
	// A fixed seed: with a random one, the reference's 40 checks now and
	// then never reached a DEAD row to redrive, and the test failed.
	setFlag(t, "rapid.seed", "1")
	db := pgscratch.NewDatabase(t)
	sum := stepcheck.Exercise(t, func(ctx context.Context, env stepcheck.Env) (stepcheck.Subject, error) {
		s, err := reference.New(ctx, env)
		return brokenRedrive{s}, err
	}, stepcheck.Options{DatabaseURL: db.URL})
	never := sum.NeverSucceeded()
	if why := never["Redrive"]; !strings.Contains(why, "lock wait") || len(never) != 1 {
		t.Fatalf("never succeeded: %v", never)
	}
	if !strings.Contains(sum.String(), "CALLED BUT NEVER SUCCEEDED: Redrive (") {
		t.Errorf("summary does not call it out: %s", sum)
	}
	ok := stepcheck.Exercise(t, reference.New, stepcheck.Options{DatabaseURL: db.URL})
	if n := ok.NeverSucceeded(); len(n) != 0 || ok.Calls["Redrive"].OK == 0 {
		t.Errorf("the reference: never succeeded %v, calls %v", n, ok.Calls)
	}
}

// lyingMark is the reference whose MarkPublished by dispatcher 1, once it
// has taken effect, reports a failure that its Indeterminate calls
// definite. Dispatcher 0's marks tell the truth: a mark that never
// succeeded would make the subject broken rather than lying.
type lyingMark struct{ stepcheck.Subject }

var errLost = errors.New("i/o timeout reading the reply")

func (s lyingMark) MarkPublished(ctx context.Context, d int, c stepcheck.Claimed, now time.Time) (bool, error) {
	changed, err := s.Subject.MarkPublished(ctx, d, c, now)
	if err == nil && changed && d == 1 {
		return false, errLost
	}
	return changed, err
}

func (s lyingMark) Indeterminate(err error) bool {
	return !errors.Is(err, errLost) && s.Subject.Indeterminate(err)
}

// When the database shows an effect of a call the subject called a
// definite failure, the message points at Indeterminate, with the error.
func TestDefiniteErrorThatTookEffectPointsAtIndeterminate(t *testing.T) {
	defer harness.Budget{Checks: 100}.Apply()() // no fail files
	db := pgscratch.NewDatabase(t)
	rec := harness.NewRecorder(t.Name(), nil)
	sum := stepcheck.Run(rec, func(ctx context.Context, env stepcheck.Env) (stepcheck.Subject, error) {
		s, err := reference.New(ctx, env)
		return lyingMark{s}, err
	}, stepcheck.Options{DatabaseURL: db.URL})
	f := sum.Failure
	if f == nil || f.Infrastructure {
		t.Fatalf("want a violation, got %+v\n%s", f, rec.Output())
	}
	t.Logf("%s: %s", f.Property, f.Message)
	for _, want := range []string{"hint: the MarkPublished just before failed with an error your Indeterminate called definite", "i/o timeout reading the reply"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %s", want, f.Message)
		}
	}
}
