// Package nodeoutbox_test checks a Node.js outbox + inbox (outbox.js: the
// pg package only, pinned by package-lock.json) through the process
// contract.
package nodeoutbox_test

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/proccheck"
)

func TestMain(m *testing.M) { harness.NoFailFilesUnlessAsked(); pgscratch.Main(m) }

// node is the command that runs outbox.js, or a skip: Node.js and the pg
// package are needed (npm ci here; .ci/run does it).
func node(t *testing.T, flags ...string) proccheck.Command {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed (Debian: apt-get install nodejs npm); .ci/run installs it")
	}
	if _, err := os.Stat("node_modules/pg"); err != nil {
		t.Skip("the pg package is not installed: run 'npm ci' in examples/nodeoutbox (.ci/run does)")
	}
	return proccheck.Command{Argv: append([]string{"node", "outbox.js"}, flags...)}
}

// The outbox passes: every committed payment delivered once, through
// kills (SIGKILL), stops (SIGTERM), freezes (SIGSTOP), partitions, broker
// faults and consumer crashes at its failpoints.
func TestNodeOutboxThroughTheProcessContract(t *testing.T) {
	restore := harness.Budget{Checks: 10}.Apply()
	defer restore()
	loopcheck.Exercise(t, proccheck.New(node(t)), loopcheck.Options{Parallel: 2, Recovery: proccheck.Recovery})
}

// Without its inbox, the consumer applies a redelivered message twice:
// effect-at-most-once.
func TestNodeOutboxWithoutInboxIsCaught(t *testing.T) {
	cmd := node(t, "--no-inbox")
	restore := harness.Budget{Checks: 50, Seed: 1, ShrinkTime: 30 * time.Second}.Apply()
	defer restore()
	rec := harness.NewRecorder(t.Name(), nil)
	res := loopcheck.Run(rec, proccheck.New(cmd), loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Parallel: 2, Recovery: proccheck.Recovery})
	if res.Failure == nil || res.Failure.Property != "effect-at-most-once" {
		t.Fatalf("the inbox-less consumer was not caught by effect-at-most-once: %s", res.Story())
	}
	t.Logf("caught at schedule %d; shrunk to %s, reproduced %d of %d\n%s", res.First.Check, harness.Count(len(res.Schedule), "steps"), res.Reproduced, res.Confirmations, res.Story())
}

// Completing a claim by the row alone is belied by a relay frozen past its
// lease (SIGSTOP … SIGCONT) just before its publish: another relay takes
// the event over, and the thawed relay's completion still changes the
// row, as its own report says: fencing.
func TestNodeOutboxUnfencedIsCaughtByAFreeze(t *testing.T) {
	cmd := node(t, "--unfenced")
	opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Recovery: proccheck.Recovery}
	n, f, err := loopcheck.Replay(proccheck.New(cmd), opts, loopcheck.FrozenPastLease(opts.Lease, 2*time.Second), "fencing", 3)
	if err != nil || n < 2 {
		t.Fatalf("the unfenced completion was caught by fencing %d of 3 (%v): %+v", n, err, f)
	}
	t.Logf("caught %d of 3: %s\n%s", n, f.Message, f.History.Story())
}
