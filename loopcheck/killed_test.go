package loopcheck_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// undead is the reference whose Dispatch leaves a goroutine behind that
// outlives its context by design (context.WithoutCancel), as some
// libraries' background workers do: after its kill it keeps trying to
// reach the database and to publish. Close ends it.
type undead struct {
	*refloop.Subject
	env      loopcheck.Env
	wg       sync.WaitGroup
	stop     chan struct{}
	tried    atomic.Int64 // connects and publishes attempted after death
	got      atomic.Int64 // of those, how many went through
	stopOnce sync.Once
}

func (u *undead) Dispatch(ctx context.Context, i int, pub harness.Publisher) error {
	u.wg.Go(func() {
		<-ctx.Done()  // "dead" from here on, yet it goes on
		for range 3 { // within the schedule's pause, before any restart
			select {
			case <-u.stop:
				return
			case <-time.After(30 * time.Millisecond):
			}
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 500*time.Millisecond)
			u.tried.Add(2)
			if conn, err := pgx.Connect(cctx, u.env.ConnString(harness.Actor{Role: harness.Dispatcher, N: i})); err == nil {
				u.got.Add(1)
				conn.Close(cctx)
			}
			if pub.Publish(cctx, harness.Message{ID: "00000000-0000-4000-8000-0000000000ff", AggregateID: "zombie"}) == nil {
				u.got.Add(1)
			}
			cancel()
		}
	})
	return u.Subject.Dispatch(ctx, i, pub)
}

func (u *undead) Close() error {
	u.stopOnce.Do(func() { close(u.stop) })
	u.wg.Wait()
	return u.Subject.Close()
}

// Killed means dead: from its kill until its restart, a relay's link
// refuses new connections and its publisher refuses publishes, however
// long its goroutines live on.
func TestKilledRelayCannotWork(t *testing.T) {
	var u *undead
	newSubject := func(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
		s, err := refloop.Build(ctx, env, refloop.Options{Notify: true})
		u = &undead{Subject: s, env: env, stop: make(chan struct{})}
		return u, err
	}
	s := loopcheck.Schedule{{Kind: "commit", N: 1}, {Kind: "kill", N: 0}, {Kind: "kill", N: 1},
		{Kind: "pause", For: 300 * time.Millisecond}, {Kind: "commit", N: 1}}
	n, f, err := loopcheck.Replay(newSubject, loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL}, s, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("the run failed:\n%s: %s\n%s", f.Property, f.Message, f.History.Story())
	}
	if u.tried.Load() == 0 {
		t.Fatal("the undead relay tried nothing after its kill: the test shows nothing")
	}
	if got := u.got.Load(); got > 0 {
		t.Fatalf("%d of %d connects and publishes of a killed relay went through", got, u.tried.Load())
	}
}

// A consumer crashed before its commit or after it (before the ack) is
// cut off and handed the message again; the reference's inbox makes the
// effect happen once all the same, and the crashes are counted.
func TestConsumerCrashesAtFailpoints(t *testing.T) {
	s := loopcheck.Schedule{{Kind: "commit", N: 2}, {Kind: "pause", For: 200 * time.Millisecond},
		{Kind: "crash-consumer", N: 0, At: harness.AfterCommit}, {Kind: "pause", For: 200 * time.Millisecond},
		{Kind: "crash-consumer", N: 1, At: harness.BeforeCommit}}
	restore := harness.Budget{Checks: 1}.Apply()
	defer restore()
	n, f, err := loopcheck.Replay(refloop.New, loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL}, s, "", 1)
	if err != nil || n != 0 {
		t.Fatalf("the reference failed under consumer crashes (%v): %+v", err, f)
	}
	var story *harness.History
	_, f, _ = loopcheck.Replay(onceDuplicated, loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL}, s, "", 1)
	if f != nil {
		story = f.History
	}
	if story == nil || !strings.Contains(story.Story(), "crashed at after-commit") || !strings.Contains(story.Story(), "crashed at before-commit") {
		t.Fatalf("the story does not show both crashes reached:\n%s", story.Story())
	}
}

// onceDuplicated is the reference whose Effects, once the schedule's five
// steps are done (one read after each), reports an event twice: only so
// that Replay hands back the story of the run.
func onceDuplicated(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	s, err := refloop.Build(ctx, env, refloop.Options{Notify: true})
	return &endDouble{Subject: s}, err
}

type endDouble struct {
	*refloop.Subject
	calls atomic.Int64
}

func (e *endDouble) Effects(ctx context.Context) (map[string]int, error) {
	fx, err := e.Subject.Effects(ctx)
	if err == nil && e.calls.Add(1) > 5 {
		fx["00000000-0000-4000-8000-00000000beef"] = 2
	}
	return fx, err
}
