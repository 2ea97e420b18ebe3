package loopcheck_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// crashSchedule commits, crashes the server under the relays, and
// commits again.
var crashSchedule = loopcheck.Schedule{{Kind: "commit", N: 2}, {Kind: "pause", For: refloop.Recovery, Settle: true},
	{Kind: "crash-db"}, {Kind: "commit", N: 2}, {Kind: "pause", For: 500 * time.Millisecond}}

// ownedServer is the shared server, if the harness owns it (it can
// crash it); the test is skipped otherwise.
func ownedServer(t *testing.T) *pgscratch.Server {
	srv := pgscratch.Shared(t)
	if !srv.Owned() {
		t.Skip("the shared server is not the harness's own: it cannot be crashed")
	}
	return srv
}

// A database crash under the relays (crash-db): the reference relay
// reconnects and delivers what was committed before and after it; a
// relay that stops on a lost connection is caught (relay-liveness).
func TestCrashDatabaseStep(t *testing.T) {
	srv := ownedServer(t)
	for _, c := range []struct {
		name   string
		new    loopcheck.NewSubject
		failed string
	}{{"reference", refloop.New, ""}, {"quits on a lost connection", quitsOnLostConnection, "relay-liveness"}} {
		t.Run(c.name, func(t *testing.T) {
			var story string
			opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Recovery: refloop.Recovery, CrashDatabase: srv.Crash,
				OnCheck: func(h *harness.History) { story = h.Story() }}
			n, f, err := loopcheck.Replay(c.new, opts, crashSchedule, c.failed, 1)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.failed == "" && n != 0:
				t.Fatalf("failed: %+v\n%s", f, story)
			case c.failed != "" && n != 1:
				t.Fatalf("not caught by %s: %+v\n%s", c.failed, f, story)
			}
			if !strings.Contains(story, "CrashDatabase") || !strings.Contains(story, "back after") {
				t.Errorf("the story lacks the crash:\n%s", story)
			}
		})
	}
}

// quitsOnLostConnection is the reference relay whose loop returns once
// a session of its own loses its connection: a relay that takes a
// database crash for its own end.
func quitsOnLostConnection(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	s, err := refloop.New(ctx, env)
	if err != nil {
		return s, err
	}
	return quitter{s, env}, nil
}

type quitter struct {
	loopcheck.Subject
	env loopcheck.Env
}

func (q quitter) Dispatch(ctx context.Context, i int, pub harness.Publisher) error {
	conn, err := pgx.Connect(ctx, q.env.ConnString(harness.Actor{Role: harness.Dispatcher, N: i}))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- q.Subject.Dispatch(lctx, i, pub) }()
	for {
		select {
		case err := <-done:
			return err
		case <-time.After(50 * time.Millisecond):
		}
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		err := conn.Ping(pctx)
		pcancel()
		if err != nil && ctx.Err() == nil && conn.IsClosed() {
			cancel()
			<-done
			return nil // "the database went away: shutting down"
		}
	}
}
