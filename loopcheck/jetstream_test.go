package loopcheck_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// With a real broker (an embedded JetStream behind its own link), the
// reference relay passes schedules whose broker-link steps partition,
// reset and slow the wire, and lose acks the stream stored; the
// coverage shows the broker link's faults struck.
func TestReferenceLoopThroughJetStream(t *testing.T) {
	skipUnderRace(t)
	restore := harness.Budget{Checks: 30, Seed: 3, ShrinkTime: time.Second}.Apply()
	defer restore()
	rec := harness.NewRecorder(t.Name(), nil)
	res := loopcheck.Run(rec, refloop.New, loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, JetStream: true, Recovery: refloop.Recovery})
	if res.Failure != nil || rec.Failed() {
		t.Fatalf("the reference loop failed through JetStream:\n%s\n%s", res.Story(), rec.Output())
	}
	struck := 0
	for _, f := range res.Nemesis {
		if f.Where == "broker" && slices.Contains(faults.Loop, faults.Kind(f.Kind)) {
			t.Logf("%s on the broker's link: %d injected, %d struck, %d affected", f.Kind, f.Injected, f.Struck, f.Affected)
			struck += f.Struck
		}
	}
	if struck == 0 {
		t.Fatalf("no network fault struck the broker's link: %s", res.Coverage())
	}
	t.Log(res.Coverage())
}

// A lost ack on the broker's wire: the stream has the event, the relay
// does not know it; the consumer gets it from the stream, once.
func TestJetStreamLostAckIsCarried(t *testing.T) {
	skipUnderRace(t)
	s := loopcheck.Schedule{{Kind: "commit", N: 1}, {Kind: "pause", For: refloop.Recovery, Settle: true},
		{Kind: "broker-link", Fault: "lost-reply", For: time.Second}, {Kind: "pause", For: 500 * time.Millisecond}}
	var story string
	opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, JetStream: true, Recovery: refloop.Recovery,
		OnCheck: func(h *harness.History) { story = h.Story() }}
	if n, f, err := loopcheck.Replay(refloop.New, opts, s, "", 1); err != nil || n != 0 {
		t.Fatalf("the reference failed (%v): %+v", err, f)
	}
	for _, want := range []string{"BrokerLink", "lost-reply"} {
		if !strings.Contains(story, want) {
			t.Errorf("the story lacks %q:\n%s", want, story)
		}
	}
}

// skipUnderRace: an embedded NATS server under the race detector slows
// every schedule of a loaded runner past what its verdicts should rest
// on; CI runs these tests without -race, on a plain PostgreSQL.
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("the JetStream loop tests run without -race: go test -run JetStream ./loopcheck/")
	}
}

// A relay that leans on the broker's deduplication (Deduper) is held to
// what the window gives: a window-outage (its first publish stored, the
// ack lost, every relay cut off past the window) has the mutant that
// resends whenever it is due store the event twice (dedupe-window),
// every time; the relay that gives up past the window passes the same
// story, and so does the reference, which declares nothing.
func TestWindowOutageCatchesAResendPastTheDedupeWindow(t *testing.T) {
	skipUnderRace(t)
	s := loopcheck.Schedule{{Kind: "pause", For: refloop.Recovery, Settle: true},
		{Kind: "window-outage", For: 300 * time.Millisecond}, {Kind: "pause", For: 500 * time.Millisecond}}
	for _, c := range []struct {
		name    string
		new     loopcheck.NewSubject
		failing bool
	}{{"dedupe-past-window", refloop.DedupePastWindow, true}, {"dedupe", refloop.Dedupe, false}, {"reference", refloop.New, false}} {
		t.Run(c.name, func(t *testing.T) {
			var story string
			opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, JetStream: true, DedupeWindow: refloop.DedupeRunWindow,
				Recovery: refloop.Recovery, OnCheck: func(h *harness.History) { story = h.Story() }}
			n, f, err := loopcheck.Replay(c.new, opts, s, "", 2)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.failing && (n != 2 || f == nil || f.Property != "dedupe-window"):
				t.Fatalf("reproduced %d of 2, want 2 by dedupe-window: %+v\n%s", n, f, story)
			case !c.failing && n != 0:
				t.Fatalf("failed %d of 2: %+v\n%s", n, f, story)
			}
			if !strings.Contains(story, "WindowOutage") {
				t.Errorf("the story lacks the window outage:\n%s", story)
			}
			t.Logf("%s: %+v", c.name, f)
		})
	}
}
