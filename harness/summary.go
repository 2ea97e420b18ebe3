package harness

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/outboxcheck/outboxcheck/faults"
)

// Summary is what a run did, for reports: how many checks, what each fault
// kind did, and which properties did not apply.
type Summary struct {
	Checks     int  // checks generated, up to and including the first failing one
	ShrinkRuns int  // checks replayed while shrinking a failure
	Steps      int  // actions of the generated checks (not of shrinking)
	OutOfTime  bool // Options.Deadline passed before rapid's checks were done
	// Interrupted says Options.Interrupt stopped the run: the checks
	// counted are the ones that ran, and a failure found before it is
	// shrunk only as far as it got.
	Interrupted   bool
	Network       faults.Coverage
	Broker        BrokerCoverage
	Slots         SlotCoverage // what a replication slot of the subject held back (the loop contract)
	Crashes       CrashCoverage
	NotApplicable map[string]string // property or fault → why
	// Calls counts each kind of subject call and its successes (see
	// NeverSucceeded).
	Calls map[string]CallCount
	// Failure is the run's failure, shrunk; nil when every check passed.
	Failure *Failure
	// First is when the run first failed; nil when it did not.
	First *FirstFailure
	// Progress has a checkpoint per generated check, in order, as it
	// ended (shrink runs excluded).
	Progress []Checkpoint
	// ShrinkEnd is when shrinking ended, from the run's start; zero when
	// nothing was shrunk. It began at First.Elapsed.
	ShrinkEnd time.Duration
	// ShrinkDiscarded counts shrink candidates given up because they met
	// infrastructure trouble (they count as passing: the counterexample
	// stays the last one that failed), and ShrinkStopped says why
	// shrinking stopped before rapid was done, if it did: such a
	// candidate, or the shrink time running out. Empty: it ran its course.
	ShrinkDiscarded int
	ShrinkStopped   string
	// Time is where the run's wall time went.
	Time *Timing
	// Properties, when a contract records them (the loop contract), say
	// how each property was checked and how often: reports build the
	// verdicts from them.
	Properties []PropertyRecord
	// Nemesis, when a contract records it (the loop contract), counts
	// every kind of fault it has, per link or place.
	Nemesis []FaultCount
	// Outcomes is the failing check's end state, when its contract
	// judges one (the loop contract): every committed payment's outcome,
	// in payment order. Nil when nothing failed, or failed before the end.
	Outcomes []PaymentOutcome
}

// BrokerCoverage counts the broker link's own faults.
type BrokerCoverage struct {
	Refused int // publishes the broker refused
	AckLost int // publishes accepted whose acknowledgement was lost
	// Duplicates counts publishes the broker accepted of an event it
	// already had (a retry after an ambiguous publish, a reclaim after a
	// lease ran out): what an at-least-once relay does, and what a
	// consumer's dedupe must absorb.
	Duplicates int
	// StoredTwice counts, with a real broker that deduplicates by message
	// id (JetStream), the events its stream holds more than once beyond
	// the first: retries that came after its dedupe window, which a
	// consumer without an inbox would apply again.
	StoredTwice int
}

// SlotCoverage is what the subject's replication slots held back: the
// most write-ahead log one retained at any step (a relay that reads the
// log keeps it while it is down), and which. Zero: no slot, or none
// retained any.
type SlotCoverage struct {
	MaxRetained int64
	Slot        string
}

// CrashCoverage counts crashes, and how many crash points were reached.
type CrashCoverage struct {
	Dispatcher        int // dispatchers killed between requests
	DispatcherMidMark int // dispatchers killed inside a mark, before or after it reached the server
	ConsumerScheduled int // consumer crashes scheduled at a failpoint
	ConsumerReached   int // of those, how many reached their failpoint
	Database          int
}

func (s Summary) String() string {
	out := fmt.Sprintf("%d checks", s.Checks)
	if s.OutOfTime {
		out += " (time budget spent)"
	}
	if s.ShrinkRuns > 0 {
		out += fmt.Sprintf(" (+%d while shrinking)", s.ShrinkRuns)
	}
	if s.Interrupted {
		out += " (interrupted)"
	}
	if len(s.Network) > 0 {
		out += fmt.Sprintf("; network: %v", s.Network)
	}
	out += fmt.Sprintf("; broker: refused %d, ack lost %d, duplicates %d; crashes: dispatcher %d (+%d mid-mark), consumer %d of %d reached, database %d",
		s.Broker.Refused, s.Broker.AckLost, s.Broker.Duplicates, s.Crashes.Dispatcher, s.Crashes.DispatcherMidMark,
		s.Crashes.ConsumerReached, s.Crashes.ConsumerScheduled, s.Crashes.Database)
	if idle := s.Network.Idle(); len(idle) > 0 {
		out += fmt.Sprintf("; INJECTED BUT NEVER STRUCK: %v", idle)
	}
	if never := s.NeverSucceeded(); len(never) > 0 {
		out += "; CALLED BUT NEVER SUCCEEDED: " + NeverSucceededText(never)
	}
	for _, k := range slices.Sorted(maps.Keys(s.NotApplicable)) {
		out += fmt.Sprintf("; %s not applicable: %s", k, s.NotApplicable[k])
	}
	return out
}
