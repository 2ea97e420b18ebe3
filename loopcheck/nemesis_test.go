package loopcheck_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/internal/pgtest"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// replayKills replays s on mutant, which property must kill every time,
// and on the reference, which must pass it.
func replayKills(t *testing.T, mutant loopcheck.NewSubject, opts loopcheck.Options, s loopcheck.Schedule, property string) string {
	t.Helper()
	opts.DatabaseURL, opts.Recovery = pgtest.Database(t).URL, refloop.Recovery
	n, f, err := loopcheck.Replay(mutant, opts, s, property, 1)
	if err != nil || n != 1 {
		t.Fatalf("killed by %s %d of 1 (%v): %+v", property, n, err, f)
	}
	t.Log(f.Message)
	if n, g, err := loopcheck.Replay(refloop.New, opts, s, "", 1); err != nil || n != 0 {
		t.Fatalf("the reference failed the same schedule (%v): %s\n%s", err, g.Message, g.History.Story())
	}
	return f.History.Story()
}

// A relay whose failure update is rolled back with the send retries a
// refused event at once: backoff, from the broker's record.
func TestAttemptsRolledBackIsKilledByBackoff(t *testing.T) {
	// backoff judges a retry only within a lease of the payment's commit
	// (an older claim may come later): a 3 s lease leaves a loaded
	// machine's relay time to fail the publish and retry it (300 ms did
	// not).
	replayKills(t, refloop.AttemptsRolledBack, loopcheck.Options{MaxAttempts: 3, Lease: 3 * time.Second}, poisoned, "backoff")
}

// A relay that never writes DEAD retries a poison event for ever, spaced
// as declared: dead-letter, not backoff.
func TestNeverDeadIsKilledByDeadLetter(t *testing.T) {
	replayKills(t, refloop.NeverDead, loopcheck.Options{MaxAttempts: 3}, poisoned, "dead-letter")
}

// A relay that acks its whole batch after stopping at a timed-out
// message loses the rows after it: a restarted relay finds three events
// in one batch on a broker that acks a second late.
func TestBatchAckLosesTheRestOfTheBatch(t *testing.T) {
	s := loopcheck.Schedule{{Kind: "kill", N: 0}, {Kind: "commit", N: 3},
		{Kind: "broker-slow", For: time.Second, Delay: time.Second}, {Kind: "restart", N: 0}, {Kind: "pause", For: 1500 * time.Millisecond}}
	replayKills(t, refloop.BatchAck, loopcheck.Options{Dispatchers: 1}, s, "no-loss")
}

// A relay that publishes inside its FOR UPDATE lock, cut off mid-publish,
// blocks the other relay: relay-isolation. The reference's other relay
// publishes the probe.
func TestLockWaitIsKilledByRelayIsolation(t *testing.T) {
	story := replayKills(t, refloop.LockWait, loopcheck.Options{}, loopcheck.Schedule{{Kind: "wedge"}}, "relay-isolation")
	if !strings.Contains(story, "holding row locks") {
		t.Errorf("the story does not say the wedged relay held row locks:\n%s", story)
	}
}

// tattler is the reference with one phantom effect: it fails no-phantom
// at the first reading after healing, so the run hands back its story.
type tattler struct{ *refloop.Subject }

func (t tattler) Effects(ctx context.Context) (map[string]int, error) {
	fx, err := t.Subject.Effects(ctx)
	if fx != nil {
		fx["00000000-0000-4000-8000-00000000fffe"] = 1
	}
	return fx, err
}

func newTattler(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	s, err := refloop.Build(ctx, env, refloop.Options{Notify: true})
	return tattler{s}, err
}

// A graceful stop, a held-open transaction and a wedge are states a
// correct outbox lives through: the reference passes, and the story (told
// by tattler) shows each did what it says.
func TestReferenceLivesThroughStopsHoldsAndWedges(t *testing.T) {
	opts := loopcheck.Options{DatabaseURL: pgtest.Database(t).URL, Recovery: refloop.Recovery}
	s := loopcheck.Schedule{{Kind: "commit", N: 1}, {Kind: "stop", N: 0}, {Kind: "hold-tx", For: 500 * time.Millisecond},
		{Kind: "commit", N: 2}, {Kind: "restart", N: 0}, {Kind: "wedge"}, {Kind: "pause", For: 200 * time.Millisecond}}
	if n, f, err := loopcheck.Replay(refloop.New, opts, s, "", 1); err != nil || n != 0 {
		t.Fatalf("the reference failed (%v): %+v", err, f)
	}
	_, f, err := loopcheck.Replay(newTattler, opts, s, "no-phantom", 1)
	if err != nil || f == nil {
		t.Fatalf("tattler told no story (%v)", err)
	}
	story := f.History.Story()
	for _, want := range []string{"StopDispatcher", "returned after", "HoldTransaction", "holding 4 tables",
		"Wedge", "link severed mid-publish", "relay-isolation: pay-5", "carried"} {
		if !strings.Contains(story, want) {
			t.Errorf("the story lacks %q:\n%s", want, story)
		}
	}
}
