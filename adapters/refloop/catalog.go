package refloop

import (
	"slices"
	"time"

	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// Mutant is a known-bad variant of the reference relay for the loop
// contract: one bug class each (docs/adapters.md), and the property that must
// kill it.
type Mutant struct {
	Name  string
	Bug   string
	Kills string // the property that names the bug
	// Also lists properties the same bug breaks on other schedules, as
	// truly as Kills does (a due query on a naive UTC timestamp makes
	// nothing due east of UTC, and retries come early west of it).
	Also []string
	New  loopcheck.NewSubject
	// MaxAttempts, if set, is the loop Options' MaxAttempts it runs with:
	// a short one, so that schedules reach DEAD.
	MaxAttempts int
	// Recovery, if set, is the recovery time it declares; else the
	// reference loop's (Recovery).
	Recovery time.Duration
	// Settings are the server settings it needs (a relay that reads the
	// write-ahead log: wal_level=logical).
	Settings []string
	// ShrinkTime, if set, is the least shrink time the kill matrix gives
	// it: its shortest story runs longer than the matrix's default.
	ShrinkTime time.Duration
	// DedupeWindow, if set, says it needs a real broker (JetStream), and
	// is the window it runs with unless one is given.
	DedupeWindow time.Duration
}

// DedupeRunWindow is what the relays that lean on the broker's
// deduplication run with: long enough, past the wire's hold
// (loopcheck.WireHold), for a resend after a publish's 2 s deadline.
const DedupeRunWindow = 5 * time.Second

// RecoveryTime is the recovery time m declares.
func (m Mutant) RecoveryTime() time.Duration {
	if m.Recovery > 0 {
		return m.Recovery
	}
	return Recovery
}

// KilledBy reports whether property p names m's bug.
func (m Mutant) KilledBy(p string) bool { return p == m.Kills || slices.Contains(m.Also, p) }

// Mutants are the loop mutants, in a stable order. A new one is one file
// (or function) and one line here.
var Mutants = []Mutant{
	{Name: "notify-only", Bug: "wakes on notifications only: a retry or an expired lease nobody notifies waits for ever", Kills: "timely-delivery", Also: []string{"takeover", "crash-loop"}, New: NotifyOnly},
	{Name: "delete-dead", Bug: "(e) deletes an event once it is DEAD, leaving no trace", Kills: "no-loss", New: DeleteDead, MaxAttempts: 3},
	{Name: "attempts-rolled-back", Bug: "(a) the failure update is rolled back with the send: a failed event is retried at once, with no backoff, for ever, never dead", Kills: "backoff", Also: []string{"dead-letter"}, New: AttemptsRolledBack, MaxAttempts: 3},
	{Name: "never-dead", Bug: "the failure update never writes DEAD: a poison event is retried, with its backoff, for ever", Kills: "dead-letter", New: NeverDead, MaxAttempts: 3},
	{Name: "batch-ack", Bug: "(b) stops a batch at a message whose ack timed out, then marks the whole batch published, unsent rows too", Kills: "no-loss", New: BatchAck},
	{Name: "batch-ack-long", Bug: "(b) batch-ack with a library's usual 30 s ack deadline: only a broker slower than that shows it", Kills: "no-loss", New: BatchAckLong, ShrinkTime: time.Minute},
	{Name: "lock-wait", Bug: "(d) locks its batch FOR UPDATE without SKIP LOCKED and publishes inside the lock, no deadlines: one relay cut off blocks all", Kills: "relay-isolation", New: LockWait},
	{Name: "head-of-line", Bug: "delivers in commit order and counts a DEAD event as still at the head: after the first dead letter nothing is delivered", Kills: "head-of-line", Also: []string{"timely-delivery"}, New: HeadOfLine, MaxAttempts: 3},
	{Name: "close-acks-unsent", Bug: "its own stop (a Close) marks the batch in progress published, the events it never sent among them", Kills: "no-loss", New: CloseAcksUnsent},
	{Name: "no-takeover", Bug: "(d) claims by holding row locks in its publishing transaction with no idle-in-transaction timeout: a relay cut off mid-publish keeps its rows, and no other relay takes them over", Kills: "takeover", New: NoTakeover},
	{Name: "lock-released-early", Bug: "(d) commits the transaction that locked its batch before publishing it: another relay finds the same rows and publishes them too", Kills: "publish-at-most-once", Also: []string{"backoff"}, New: LockReleasedEarly},
	{Name: "crash-loop", Bug: "the seed's rule: only a failed publish makes an event DEAD, so an event that crashes its relay is claimed again past the attempt limit, for ever", Kills: "crash-loop", New: CrashLoop, MaxAttempts: 3},
	{Name: "timeout-is-shutdown", Bug: "(f) takes any context.DeadlineExceeded (a publish past its deadline) for shutdown and stops for good", Kills: "relay-liveness", Also: []string{"timely-delivery"}, New: TimeoutIsShutdown},
	{Name: "dedupe-past-window", Bug: "leans on the broker's Nats-Msg-Id deduplication, yet resends an event whenever it is due, past the dedupe window too: an ack lost before a longer outage stores the event twice", Kills: "dedupe-window", New: DedupePastWindow, DedupeWindow: DedupeRunWindow, ShrinkTime: 45 * time.Second},
	{Name: "mark-unfenced", Bug: "completion fenced by status alone, not by the claim: a relay whose ack came after its lease ran out marks PUBLISHED the event another relay took over and is still publishing", Kills: "fencing", New: MarkUnfenced},
	{Name: "naive-utc-due", Bug: "(c) the due query compares with a naive UTC timestamp: east of UTC nothing is due for hours", Kills: "timely-delivery", Also: []string{"backoff"}, New: NaiveUTCDue},
}

// ByName is the loop mutant called name.
func ByName(name string) (Mutant, bool) {
	for _, m := range Mutants {
		if m.Name == name {
			return m, true
		}
	}
	return Mutant{}, false
}
