// Package pyoutbox_test checks a Python outbox + inbox (outbox.py: the
// standard library and psycopg2) through the process contract.
package pyoutbox_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/proccheck"
)

func TestMain(m *testing.M) { harness.NoFailFilesUnlessAsked(); pgscratch.Main(m) }

// python is the command that runs outbox.py, or a skip: Debian's
// python3-psycopg2 is needed (.ci/run installs it). The first python3 on
// PATH may be another one (pyenv's), without it: the system's is tried
// next.
func python(t *testing.T, flags ...string) proccheck.Command {
	t.Helper()
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(py, "-c", "import psycopg2").Run() == nil {
			return proccheck.Command{Argv: append([]string{py, "outbox.py"}, flags...)}
		}
	}
	t.Skip("python3 with psycopg2 not installed (Debian: apt-get install python3-psycopg2); .ci/run installs it")
	return proccheck.Command{}
}

// The outbox passes: every committed payment delivered once, through
// kills (SIGKILL), stops (SIGTERM), partitions, broker faults and
// consumer crashes at its failpoints.
func TestPythonOutboxThroughTheProcessContract(t *testing.T) {
	restore := harness.Budget{Checks: 10}.Apply()
	defer restore()
	loopcheck.Exercise(t, proccheck.New(python(t)), loopcheck.Options{Parallel: 2, Recovery: proccheck.Recovery})
}

// Without its inbox, the consumer applies a redelivered message twice:
// effect-at-most-once.
func TestPythonOutboxWithoutInboxIsCaught(t *testing.T) {
	cmd := python(t, "--no-inbox")
	restore := harness.Budget{Checks: 50, Seed: 1, ShrinkTime: 30 * time.Second}.Apply()
	defer restore()
	rec := harness.NewRecorder(t.Name(), nil)
	res := loopcheck.Run(rec, proccheck.New(cmd), loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Parallel: 2, Recovery: proccheck.Recovery})
	if res.Failure == nil || res.Failure.Property != "effect-at-most-once" {
		t.Fatalf("the inbox-less consumer was not caught by effect-at-most-once: %s", res.Story())
	}
	t.Logf("caught at schedule %d; shrunk to %s, reproduced %d of %d\n%s", res.First.Check, harness.Count(len(res.Schedule), "steps"), res.Reproduced, res.Confirmations, res.Story())
}

// Declaring each event published once while trusting a lease is belied
// by a relay frozen past its lease (SIGSTOP … SIGCONT) just before its
// publish: another relay publishes the event meanwhile, and the thawed one
// publishes it again: publish-at-most-once. The story is the canonical
// one (settle, then a freeze of three leases), told as a schedule: a
// drawn schedule meets it only when it has a freeze and no dispatcher
// fault at all (any kill, stop or cut excuses a second publish), which
// seed 1 did within 100 schedules until a new kind of step moved every
// draw.
func TestPythonOutboxClaimingOnceIsCaughtByAFreeze(t *testing.T) {
	f := caughtByAFreeze(t, python(t, "--claims-once"), "publish-at-most-once")
	if !strings.Contains(f.History.Story(), "Freeze") {
		t.Errorf("the story has no freeze:\n%s", f.History.Story())
	}
}

// Completing a claim by the row alone, not while the claim is current, is
// belied by a relay frozen past its lease just before its publish:
// another relay takes the event over (its claim report names the frozen
// one's), and the thawed relay's completion still changes the row, as
// its own report says: fencing. The story is the canonical freeze; drawn
// schedules find it too (docs/process-subjects.md).
func TestPythonOutboxUnfencedIsCaughtByAFreeze(t *testing.T) {
	f := caughtByAFreeze(t, python(t, "--unfenced"), "fencing")
	if !strings.Contains(f.Message, "was taken over by claim") {
		t.Errorf("the message does not name the takeover: %s", f.Message)
	}
}

// caughtByAFreeze replays the canonical freeze (loopcheck.FrozenPastLease)
// on cmd three times, and asks that property fail at least twice.
func caughtByAFreeze(t *testing.T, cmd proccheck.Command, property string) *harness.Failure {
	t.Helper()
	opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Recovery: proccheck.Recovery}
	n, f, err := loopcheck.Replay(proccheck.New(cmd), opts, loopcheck.FrozenPastLease(opts.Lease, 2*time.Second), property, 3)
	if err != nil || n < 2 {
		t.Fatalf("%s was caught by %s %d of 3 (%v): %+v", strings.Join(cmd.Argv, " "), property, n, err, f)
	}
	t.Logf("caught %d of 3: %s\n%s", n, f.Message, f.History.Story())
	return f
}
