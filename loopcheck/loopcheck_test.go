package loopcheck_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

func TestMain(m *testing.M) { harness.NoFailFilesUnlessAsked(); pgscratch.Main(m) }

// The reference relay loop, with LISTEN/NOTIFY wake-ups and two
// dispatchers, passes under partitions (held and severed), kills, and
// broker outages of any length: what it gives up on is DEAD, not lost.
func TestReferenceLoop(t *testing.T) {
	restore := harness.Budget{Checks: 20, Seed: 7, ShrinkTime: time.Second}.Apply()
	defer restore()
	rec := harness.NewRecorder(t.Name(), nil)
	res := loopcheck.Run(rec, refloop.New, loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL})
	if res.Failure != nil || rec.Failed() {
		t.Fatalf("the reference loop failed:\n%s\n%s", res.Story(), rec.Output())
	}
	if res.Checks != 20 {
		t.Fatalf("%d checks ran, want 20", res.Checks)
	}
	if res.Loop.Kills == 0 || res.Loop.Outages == 0 {
		t.Fatalf("the nemesis did nothing: %s", res.Coverage())
	}
	// Judgements count as the run counts: per step over its steps, at
	// the end once per schedule (shrinking excluded).
	for _, p := range res.Properties {
		if want := map[string]int{"relay-liveness": res.Steps, "no-loss": res.Checks, "no-phantom": res.Checks}[p.Name]; want > 0 && p.Judged != want {
			t.Errorf("%s judged %d %s, want %d", p.Name, p.Judged, p.Unit, want)
		}
	}
	t.Log(res.Coverage())
}

// outage is a broker outage far longer than the reference's retry budget
// at MaxAttempts 3 (20 ms and 40 ms of backoff): the event ends DEAD. The
// drain ends the outage, so the pause after the commit is what the relay
// gets to fail three times: 4 s, not the 1.2 s that CI's most loaded run
// (-race, two burners, every package at once) once did not fit three
// claims, refusals and marks into.
var outage = loopcheck.Schedule{{Kind: "broker-down", For: 5 * time.Second}, {Kind: "commit", N: 1},
	{Kind: "pause", For: 4 * time.Second}}

// A broker outage longer than the retry budget ends with the reference's
// event DEAD, visibly, and the run passes: dead is not lost.
func TestOutageLongerThanRetryBudgetEndsDead(t *testing.T) {
	db := pgscratch.NewDatabase(t)
	opts := loopcheck.Options{DatabaseURL: db.URL, MaxAttempts: 3}
	n, f, err := loopcheck.Replay(refloop.New, opts, outage, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("a DEAD event was judged a violation:\n%s", f.History.Story())
	}
	var status string
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, `SELECT status FROM outbox_events WHERE aggregate_id = 'pay-1'`).Scan(&status); err != nil {
		t.Fatal(err)
	}
	if status != "DEAD" {
		t.Fatalf("pay-1 is %s after the outage, want DEAD (the schedule did not exhaust the retries)", status)
	}
}

// A relay that deletes an event once it is DEAD, leaving no trace, loses
// it: no-loss, on the same outage.
func TestDeleteDeadIsKilledByNoLoss(t *testing.T) {
	opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, MaxAttempts: 3}
	n, f, err := loopcheck.Replay(refloop.DeleteDead, opts, outage, "no-loss", 2)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("delete-dead was killed by no-loss %d of 2 times; last failure: %+v", n, f)
	}
	if !strings.Contains(f.Message, "pay-1") {
		t.Fatalf("the message does not name the lost payment: %s", f.Message)
	}
	t.Logf("%s\n%s", f.Message, f.History.Story())
}

// The same mutant is found by drawn schedules, and its counterexample
// shrinks to the bug's own steps. Shrinking is bounded by time, so under
// the race detector's slowdown the length is not asserted: CI runs it
// without.
func TestDeleteDeadShrinks(t *testing.T) {
	if raceEnabled {
		t.Skip("shrinking is timed; run without -race (.ci/run does)")
	}
	restore := harness.Budget{Checks: 100, Seed: 3, ShrinkTime: 90 * time.Second}.Apply()
	defer restore()
	start := time.Now()
	rec := harness.NewRecorder(t.Name(), nil)
	res := loopcheck.Run(rec, refloop.DeleteDead, loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, MaxAttempts: 3, Recovery: refloop.Recovery,
		Parallel: loopcheck.DefaultParallel()})
	if res.Failure == nil || res.Failure.Property != "no-loss" {
		t.Fatalf("delete-dead was not killed by no-loss: %s", res.Story())
	}
	t.Logf("found at schedule %d after %v; shrunk to %d steps in %v (%d shrink runs)\n%s",
		res.First.Check, res.First.Elapsed.Round(time.Millisecond), len(res.Schedule), time.Since(start).Round(time.Second), res.ShrinkRuns, res.Story())
	// The shrinker tries each candidate twice and keeps the steadiest
	// telling: commit, poison for ever (2 steps; 4 seen when a run raced).
	if n := len(res.Schedule); n > 6 {
		t.Errorf("the counterexample has %d steps, want at most 6", n)
	}
	if res.Reproduced == 0 || res.Confirmations != 5 {
		t.Errorf("the shrunk schedule reproduced %d of %d, want at least once in 5", res.Reproduced, res.Confirmations)
	}
	// Judgements count as the steps do: none of a schedule that ended
	// after the failing one, though it ended before it (several at once).
	for _, p := range res.Properties {
		if p.Name == "relay-liveness" && p.Judged > res.Steps {
			t.Errorf("relay-liveness judged %d steps of the run's %d", p.Judged, res.Steps)
		}
	}
}

// A relay that wakes only on notifications leaves a failed publish's retry
// and an expired lease waiting forever: still in its outbox, late.
func TestNotifyOnlyIsLate(t *testing.T) {
	opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Recovery: time.Second}
	// The payment's first publish is refused, however late the relay
	// comes to it (a broker outage of a few hundred ms missed it on a
	// loaded machine): only a rescan would retry it.
	s := loopcheck.Schedule{{Kind: "poison", N: 1, After: 1}, {Kind: "commit", N: 1}, {Kind: "pause", For: 400 * time.Millisecond}}
	var stories []string
	opts.OnCheck = func(h *harness.History) { stories = append(stories, h.Story()) }
	n, f, err := loopcheck.Replay(refloop.NotifyOnly, opts, s, "timely-delivery", 2)
	if err != nil {
		t.Fatal(err)
	}
	// At least once: on a loaded machine a relay's call can time out, and
	// notify-only then reconnects, and a reconnect scans once (found 1 of
	// 2 beside the loop kill matrix, its second run delivered).
	if n == 0 || f == nil {
		t.Fatalf("notify-only was found late %d of 2 times: %+v\nthe runs' stories:\n%s", n, f, strings.Join(stories, "\n"))
	}
	if !strings.Contains(f.Message, "pay-1") || !strings.Contains(f.Message, "hard bound") {
		t.Fatalf("the message does not say what is late and how long the harness waited: %s", f.Message)
	}
}

// A saved schedule replays from its file, with the options it ran with.
func TestReplayScheduleFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "schedule.json")
	opts := loopcheck.Options{MaxAttempts: 3}
	if err := loopcheck.WriteFile(path, loopcheck.File{Property: "no-loss", Options: opts, Schedule: outage}); err != nil {
		t.Fatal(err)
	}
	n, f, err := loopcheck.ReplayFile(refloop.DeleteDead, loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL}, path, 1)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || f.Options.MaxAttempts != 3 || len(f.Schedule) != len(outage) {
		t.Fatalf("replayed %d of 1, options %+v, %d steps", n, f.Options, len(f.Schedule))
	}
}

// A garbage schedule file is refused with a line that names the problem.
func TestReadFileRefusesGarbage(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"notjson":  "{",
		"format":   `{"format":"other","schedule":[{"kind":"commit"}]}`,
		"empty":    `{"format":"outboxcheck.loop-schedule/v1","schedule":[]}`,
		"kind":     `{"format":"outboxcheck.loop-schedule/v1","schedule":[{"kind":"explode"}]}`,
		"fault":    `{"format":"outboxcheck.loop-schedule/v1","schedule":[{"kind":"partition","fault":"gremlin"}]}`,
		"dispatch": `{"format":"outboxcheck.loop-schedule/v1","schedule":[{"kind":"kill","n":7}]}`,
	} {
		path := filepath.Join(dir, name)
		if err := writeString(path, body); err != nil {
			t.Fatal(err)
		}
		if _, err := loopcheck.ReadFile(path); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line", name, err)
		}
	}
}

// A relay that rescans only every 30 s is slow, not wrong: it declares
// its recovery time, the harness waits while it makes progress, and it
// passes. (Before the adaptive wait, a fixed 20 s quiescence called its
// late deliveries lost.)
func TestSlowRescanPasses(t *testing.T) {
	restore := harness.Budget{Checks: 4, Seed: 11, ShrinkTime: time.Second}.Apply()
	defer restore()
	rec := harness.NewRecorder(t.Name(), nil)
	res := loopcheck.Run(rec, refloop.SlowRescan, loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Recovery: refloop.SlowRescanRecovery})
	if res.Failure != nil || rec.Failed() {
		t.Fatalf("the slow relay failed:\n%s\n%s", res.Story(), rec.Output())
	}
	t.Log(res.Coverage())
}

// poisoned is one payment whose event the broker refuses on every publish.
// The pause leaves a loaded machine's relay time for its retries.
var poisoned = loopcheck.Schedule{{Kind: "poison", N: 1}, {Kind: "commit", N: 1}, {Kind: "pause", For: 1500 * time.Millisecond}} // the next payment

// The reference gives up on a poison event after MaxAttempts and shows it
// dead: the run passes.
func TestPoisonEndsDead(t *testing.T) {
	opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, MaxAttempts: 3, Recovery: refloop.Recovery}
	n, f, err := loopcheck.Replay(refloop.New, opts, poisoned, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("a poison event gone DEAD was judged a violation: %s\n%s", f.Message, f.History.Story())
	}
}

// A due query that compares with a naive UTC timestamp works in UTC and
// finds nothing due east of it: the sessions' TimeZone is part of the
// schedule, and timely-delivery names the late payment.
func TestNaiveUTCDueIsLateEastOfUTC(t *testing.T) {
	opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Recovery: refloop.Recovery}
	in := func(zone string) loopcheck.Schedule {
		return loopcheck.Schedule{{Kind: "timezone", Zone: zone}, {Kind: "commit", N: 1}, {Kind: "pause", For: 200 * time.Millisecond}}
	}
	if n, f, err := loopcheck.Replay(refloop.NaiveUTCDue, opts, in("UTC"), "", 1); err != nil || n != 0 {
		t.Fatalf("in UTC the mutant failed (%v): %+v", err, f)
	}
	n, f, err := loopcheck.Replay(refloop.NaiveUTCDue, opts, in("Asia/Tokyo"), "timely-delivery", 1)
	if err != nil || n != 1 {
		t.Fatalf("in Asia/Tokyo: killed by timely-delivery %d of 1 (%v): %+v", n, err, f)
	}
	if n, f, err := loopcheck.Replay(refloop.New, opts, in("Asia/Tokyo"), "", 1); err != nil || n != 0 {
		t.Fatalf("the reference failed in Asia/Tokyo (%v): %+v", err, f)
	}
}

// A relay that takes a publish's deadline for its shutdown stops for good
// on a slow broker: relay-liveness names it as it happens. The reference,
// on the same slow broker, delivers.
func TestTimeoutIsShutdownStopsTheRelay(t *testing.T) {
	opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Dispatchers: 1, Recovery: refloop.Recovery}
	// The first payment, committed into the slow window, is acked after
	// the relay's 2 s call deadline (the message is in all the same); the
	// second finds the relay gone. The window and the pause leave a loaded
	// machine's relay time to come to the first payment and to give up
	// on it.
	s := loopcheck.Schedule{{Kind: "broker-slow", For: 1500 * time.Millisecond, Delay: 2500 * time.Millisecond, N: 1},
		{Kind: "pause", For: 4 * time.Second}, {Kind: "commit", N: 1}, {Kind: "pause", For: 100 * time.Millisecond}}
	n, f, err := loopcheck.Replay(refloop.TimeoutIsShutdown, opts, s, "relay-liveness", 1)
	if err != nil || n != 1 {
		t.Fatalf("killed by relay-liveness %d of 1 (%v): %+v", n, err, f)
	}
	if !strings.Contains(f.History.Story(), "DispatchReturned") {
		t.Errorf("the story does not show the relay ending on its own:\n%s", f.History.Story())
	}
	if n, f, err := loopcheck.Replay(refloop.New, opts, s, "", 1); err != nil || n != 0 {
		t.Fatalf("the reference failed on the slow broker (%v): %+v", err, f)
	}
}
