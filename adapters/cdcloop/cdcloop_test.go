package cdcloop_test

import (
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/cdcloop"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// The harness's own cluster, started with what the relay needs.
func TestMain(m *testing.M) {
	harness.NoFailFilesUnlessAsked()
	pgscratch.MainWith(m, pgscratch.Options{Settings: cdcloop.ServerSettings})
}

var checks = flag.Int("cdc.checks", 10, "schedules for the CDC relay's pass")

// TestCDCRelayThroughTheLoopContract: relays killed, cut off, frozen
// links, a broker that goes down, poison events, duplicates: nothing
// committed is lost, nothing takes effect twice. The coverage says how
// much write-ahead log the relay's slot held back.
func TestCDCRelayThroughTheLoopContract(t *testing.T) {
	restore := harness.Budget{Checks: *checks}.Apply()
	defer restore()
	db := pgscratch.NewDatabase(t)
	res := loopcheck.Exercise(t, cdcloop.New, loopcheck.Options{DatabaseURL: db.URL, Recovery: cdcloop.Recovery, Parallel: loopcheck.DefaultParallel()})
	if res.Slots.MaxRetained <= 0 || !strings.Contains(res.Slots.Slot, "cdc") || !strings.Contains(res.Coverage(), "retained up to") {
		t.Errorf("no slot's retained WAL read: %+v; %s", res.Slots, res.Coverage())
	}
}

// Each mutant's story, replayed: lost every time (the kill matrix draws
// and shrinks them: selftest/killmatrix/loopmatrix). The reference relay
// passes each story.
func TestCDCMutantStoriesReplay(t *testing.T) {
	cold := loopcheck.Schedule{{Kind: "cold"}, {Kind: "commit", N: 1}}
	stories := map[string]loopcheck.Schedule{
		"cdc-from-current":       cold,
		"cdc-late-slot":          cold,
		"cdc-temporary-slot":     cold,
		"cdc-confirm-whole":      {{Kind: "poison", N: 1}, {Kind: "commit", N: 1}},
		"cdc-confirm-on-receipt": {{Kind: "crash-loop"}},
		"cdc-keepalive-confirm":  {{Kind: "crash-loop"}},
		"cdc-strict-columns":     {{Kind: "schema-change"}, {Kind: "commit", N: 1}},
	}
	opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Recovery: cdcloop.Recovery}
	for _, m := range cdcloop.Mutants {
		s, ok := stories[m.Name]
		if !ok {
			t.Errorf("%s: no story to replay", m.Name)
			continue
		}
		const n = 2
		got, f, err := loopcheck.Replay(m.New, opts, s, "", n)
		if err != nil || got != n || !m.KilledBy(f.Property) {
			t.Errorf("%s on %v: failed %d of %d (%v), last %+v; want %s every time", m.Name, s, got, n, err, f, m.Kills)
		}
		if got, f, err := loopcheck.Replay(cdcloop.New, opts, s, "", 1); err != nil || got != 0 {
			t.Errorf("the CDC relay on %s's story: %d failures (%v): %+v", m.Name, got, err, f)
		}
	}
}

// A database crash under the CDC relay: its replication connection and
// every session end, the slot comes back at its last saved position
// (perhaps an earlier one than it confirmed), and the relay resumes
// from it: nothing committed before or after the crash is lost, and
// what it reads again its consumer dedupes. Then schedules with
// crash-db steps among the rest.
func TestCDCRelayResumesAfterADatabaseCrash(t *testing.T) {
	srv := pgscratch.Shared(t)
	if !srv.Owned() {
		t.Skip("the shared server is not the harness's own: it cannot be crashed")
	}
	s := loopcheck.Schedule{{Kind: "commit", N: 2}, {Kind: "pause", For: cdcloop.Recovery, Settle: true},
		{Kind: "crash-db"}, {Kind: "commit", N: 2}, {Kind: "pause", For: 500 * time.Millisecond}}
	var story string
	opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Recovery: cdcloop.Recovery, CrashDatabase: srv.Crash,
		OnCheck: func(h *harness.History) { story = h.Story() }}
	if got, f, err := loopcheck.Replay(cdcloop.New, opts, s, "", 2); err != nil || got != 0 {
		t.Fatalf("the CDC relay failed %d of 2 (%v): %+v\n%s", got, err, f, story)
	}
	if !strings.Contains(story, "back after") {
		t.Fatalf("the story lacks the crash:\n%s", story)
	}
	restore := harness.Budget{Checks: 15, Seed: 4}.Apply()
	defer restore()
	opts.OnCheck = nil
	res := loopcheck.Exercise(t, cdcloop.New, opts)
	if res.Crashes.Database == 0 {
		t.Errorf("no crash-db step struck: %s", res.Coverage())
	}
}
