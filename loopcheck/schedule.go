package loopcheck

import (
	"fmt"
	"slices"
	"time"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
)

// Step is one event of a schedule.
type Step struct {
	// Kind is commit, rollback, partition, heal, kill, restart,
	// broker-down, broker-up, broker-slow, ack-lost, poison, slow-payment,
	// redeliver, crash-consumer, timezone, pause, stop (a graceful one),
	// hold-tx, wedge, strand, head-of-line or crash-loop; for subjects
	// that can take them, freeze, schema-change or stop-mid-batch; with
	// a real broker, broker-link (a network fault on its wire); and
	// cold, a shrinking shape.
	Kind string `json:"kind"`
	N    int    `json:"n,omitempty"` // commit, broker-slow: payments; kill/restart: dispatcher; redeliver: message index; poison, slow-payment: payment
	// After is a partition's requests before it strikes, or a poison's
	// refusals (0: every publish, for ever).
	Link  string      `json:"link,omitempty"`  // partition, heal: the actor's link
	Fault faults.Kind `json:"fault,omitempty"` // partition, broker-link
	After int         `json:"after,omitempty"`
	// For is a pause's length, a broker outage's or slow window's length
	// of real time, or how long a poison or a slow payment lasts (a
	// poison with neither For nor After lasts for ever).
	For time.Duration `json:"for,omitempty"`
	// At is a consumer crash's failpoint.
	At harness.Failpoint `json:"at,omitempty"`
	// Delay is how late a slow broker acknowledges.
	Delay time.Duration `json:"delay,omitempty"`
	// Aim is the subject's deadline (Env.Lease or one it declares:
	// Deadliner) that Delay, or a poison's or slow payment's For, was
	// drawn at: a small multiple of it, a few ms either side.
	Aim time.Duration `json:"aim,omitempty"`
	// Zone is a timezone step's TimeZone, for the database's sessions.
	Zone string `json:"zone,omitempty"`
	// Settle marks a pause the shrinker put in for the subject to settle
	// (its declared recovery), so that the story does not race: shrinking
	// keeps it.
	Settle bool `json:"settle,omitempty"`
}

// zones are the TimeZones a schedule's sessions run in: UTC first (what
// shrinking goes to), then zones far east and west of it.
var zones = []string{"UTC", "Asia/Tokyo", "America/Los_Angeles", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Kolkata"}

func (s Step) String() string {
	switch s.Kind {
	case "commit":
		return fmt.Sprintf("commit %d", s.N)
	case "partition":
		return fmt.Sprintf("partition %s %s after %d", s.Link, s.Fault, s.After)
	case "heal":
		return "heal " + s.Link
	case "freeze":
		return "freeze the next relay to publish, for " + aimText(s.For, s.Aim)
	case "kill", "restart", "stop":
		return fmt.Sprintf("%s dispatcher-%d", s.Kind, s.N)
	case "redeliver":
		return fmt.Sprintf("redeliver message #%d", s.N+1)
	case "pause", "broker-down", "hold-tx":
		if s.Settle {
			return s.Kind + " " + s.For.String() + " (settle)"
		}
		return s.Kind + " " + s.For.String()
	case "timezone":
		return "timezone " + s.Zone
	case "cold":
		return "cold: the relays start at their restart steps, or at the drain"
	case "schema-change":
		return "schema-change of the outbox table"
	case "broker-link":
		return fmt.Sprintf("broker-link %s for %v, a payment committed into it", s.Fault, s.For)
	case "stop-mid-batch":
		return fmt.Sprintf("stop-mid-batch: commit %d, stop the relay publishing the first", stopMidBatchPayments)
	case "crash-db":
		return "crash-db: SIGKILL the server, restart it, wait for its recovery"
	case "window-outage":
		return fmt.Sprintf("window-outage: commit 1, lose its first publish's ack, cut every relay off for the dedupe window and %v", s.For)
	case "broker-slow":
		return fmt.Sprintf("broker-slow %v, acks %s late, %d payments into it in one transaction", s.For, aimText(s.Delay, s.Aim), s.N)
	case "slow-payment":
		return fmt.Sprintf("slow-payment %s for %s, acks %s late", poisonWhich(s.N), aimText(s.For, s.Aim), aimText(s.Delay, s.Aim))
	case "crash-consumer":
		return fmt.Sprintf("crash-consumer at %s on message #%d", s.At, s.N+1)
	case "poison":
		return fmt.Sprintf("poison %s %s", poisonWhich(s.N), s.poisonText())
	}
	return s.Kind
}

// Schedule is what one check does, in order.
type Schedule []Step

// maxScheduleSteps caps a schedule drawn by rapid.
const maxScheduleSteps = 400

// stepKinds are the kinds a step is drawn from, uniformly; a kind listed
// twice is drawn twice as often. broker-slow is: of its draws only one
// in eight meets a given deadline of three, just past it, so a bug at a
// subject's longest deadline (a 30 s ack) would otherwise be found in
// one schedule of 40, by luck.
var stepKinds = []string{"commit", "commit", "commit", "rollback", "partition", "heal",
	"kill", "restart", "broker-down", "broker-up", "broker-slow", "broker-slow", "ack-lost", "poison", "slow-payment", "redeliver", "crash-consumer", "pause", "pause",
	"stop", "hold-tx", "wedge", "strand", "head-of-line", "crash-loop"}

// poisonWhich names a poison's payment, counted from the last one the
// producer wrote (0), so that shrinking away earlier commits keeps it.
func poisonWhich(n int) string {
	switch n {
	case 0:
		return "the last payment"
	case 1:
		return "the next payment"
	}
	return fmt.Sprintf("the payment %d on", n)
}

// slowDelays are how late a slow broker acks: within, near and past a
// typical 2 s call deadline, weighted past it (where a relay must tell a
// timeout from its shutdown, and a batch's ack from its processing).
var slowDelays = []time.Duration{20 * time.Millisecond, 300 * time.Millisecond, time.Second, 1900 * time.Millisecond, maxSlowDelay, maxSlowDelay}

// maxSlowDelay is the latest a slow broker acknowledges.
const maxSlowDelay = 2500 * time.Millisecond

// poisonText says how long a poison lasts: for a time, for a number of
// publishes, or for ever.
func (s Step) poisonText() string {
	switch {
	case s.For > 0:
		return "for " + aimText(s.For, s.Aim)
	case s.After > 0:
		return fmt.Sprintf("for %d publishes", s.After)
	}
	return "for ever"
}

// draw makes a schedule from rapid's choices: the sessions' TimeZone, a
// commit, so every schedule has something to lose, then one rapid.Custom
// per step until the stop coin comes up, so shrinking deletes whole steps.
// The steps are drawn from a swarm (swarm), not from every kind.
func draw(t *rapid.T, links []string, dispatchers, avg int, aims []time.Duration, more []string) Schedule {
	kinds := swarm(t, more)
	step := rapid.Custom(func(t *rapid.T) Step {
		if harness.DrawStop(t, avg) {
			return Step{}
		}
		return drawStep(t, kinds, links, dispatchers, aims)
	})
	s := Schedule{{Kind: "timezone", Zone: rapid.SampledFrom(zones).Draw(t, "zone")}, {Kind: "commit", N: 1}}
	for len(s) < maxScheduleSteps {
		st := step.Draw(t, "step")
		if st.Kind == "" {
			break
		}
		s = append(s, st)
	}
	return s
}

// swarm draws which kinds of fault a schedule may use (swarm testing,
// Groce et al., ISSTA 2012): each is left out with probability 1/2, so
// that a schedule often dwells on a few faults, undisturbed by the others
// (two relays both hitting a slow broker's late acks, say, with no kill
// or partition between), which a mix of every kind rarely does. Commits,
// rollbacks, heals and pauses are always in. A left-out coin shrinks to
// "in": shrinking goes back towards every kind.
//
// more are kinds beyond stepKinds that the subject can take (freeze, for
// a Pauser): drawn after the others, so that a subject without them
// draws as before.
func swarm(t *rapid.T, more []string) []string {
	out := []string{}
	leftOut := map[string]bool{}
	for _, k := range append(slices.Clone(stepKinds), more...) {
		if _, drawn := leftOut[k]; !drawn && !alwaysIn[k] {
			leftOut[k] = rapid.Bool().Draw(t, "leave out "+k)
		}
		if !leftOut[k] {
			out = append(out, k)
		}
	}
	return out
}

// alwaysIn are the step kinds every schedule may draw: what gives the
// faults something to act on.
var alwaysIn = map[string]bool{"commit": true, "rollback": true, "heal": true, "pause": true}

func drawStep(t *rapid.T, kinds, links []string, dispatchers int, aims []time.Duration) Step {
	ms := func(lo, hi int, label string) time.Duration {
		return time.Duration(rapid.IntRange(lo, hi).Draw(t, label)) * time.Millisecond
	}
	switch k := rapid.SampledFrom(kinds).Draw(t, "kind"); k {
	case "commit":
		return Step{Kind: k, N: rapid.IntRange(1, 3).Draw(t, "payments")}
	case "partition":
		return Step{Kind: k, Link: rapid.SampledFrom(links).Draw(t, "link"), Fault: rapid.SampledFrom(faults.Loop).Draw(t, "fault"),
			After: rapid.IntRange(0, 4).Draw(t, "after")}
	case "heal":
		return Step{Kind: k, Link: rapid.SampledFrom(links).Draw(t, "link")}
	case "schema-change":
		return Step{Kind: k}
	case "broker-link":
		return Step{Kind: k, Fault: rapid.SampledFrom(faults.Loop).Draw(t, "fault"),
			For: ms(50, int(maxBrokerLinkFault/time.Millisecond), "broker-link-ms")}
	case "window-outage":
		return Step{Kind: k, For: ms(100, 1000, "window-outage-ms")}
	case "crash-db":
		return Step{Kind: k}
	case "freeze":
		// Frozen around the lease, or two or three of them: its claim
		// runs out meanwhile, or just does not.
		st := Step{Kind: k}
		st.Aim, st.For = drawAimed(t, aims, 3, "freeze")
		return st
	case "kill", "restart", "stop":
		return Step{Kind: k, N: rapid.IntRange(0, dispatchers-1).Draw(t, "dispatcher")}
	case "hold-tx":
		return Step{Kind: k, For: ms(100, 2000, "hold-ms")}
	case "redeliver":
		return Step{Kind: k, N: rapid.IntRange(0, 50).Draw(t, "message")}
	case "crash-consumer":
		return Step{Kind: k, N: rapid.IntRange(0, 50).Draw(t, "message"),
			At: rapid.SampledFrom([]harness.Failpoint{harness.BeforeCommit, harness.AfterCommit}).Draw(t, "failpoint")}
	case "pause":
		return Step{Kind: k, For: ms(10, 400, "ms")}
	case "broker-down":
		return Step{Kind: k, For: ms(20, int(maxOutage/time.Millisecond), "outage-ms")}
	case "poison":
		// For ever half the time: a poison that wears off tests retries,
		// one that never does tests the dead letter. One that wears off
		// does so after a few publishes, or after a time aimed at one of
		// the subject's deadlines (a retry just before or after it).
		st := Step{Kind: k, N: rapid.IntRange(0, 2).Draw(t, "payment")}
		switch rapid.IntRange(0, 2).Draw(t, "poison lasts") {
		case 1:
			st.After = rapid.IntRange(1, 3).Draw(t, "refusals")
		case 2:
			st.Aim, st.For = drawAimed(t, aims, 3, "poison")
		}
		return st
	case "slow-payment":
		// One payment's publishes acknowledged late, for a time, each
		// aimed at one of the subject's deadlines: the broker slow for
		// that event only, as a large message or a slow partition makes it.
		st := Step{Kind: k, N: rapid.IntRange(0, 2).Draw(t, "payment")}
		st.Aim, st.For = drawAimed(t, aims, 3, "slow for")
		st.Delay = st.Aim + rapid.SampledFrom(aimOffsets).Draw(t, "late by")
		return st
	case "broker-slow":
		// Delays around the relays' own deadlines: from well within to
		// past a typical 2 s call timeout, or (3 times in 4) a few ms
		// either side of a deadline the subject declares; and up to
		// three payments committed into the window in one transaction,
		// so that a relay meets it with a batch (a window no publish
		// meets tests nothing, and payments committed one by one race
		// the relays' claims: a batch of one shows no batch's bug).
		// At least one payment: a window met only by rows already
		// pending is met by luck.
		st := Step{Kind: k, For: ms(50, 1000, "slow-ms"), N: rapid.IntRange(1, 3).Draw(t, "payments into it")}
		if rapid.IntRange(0, 3).Draw(t, "aimed") > 0 {
			st.Aim, st.Delay = drawAimed(t, aims, 1, "delay")
		} else {
			st.Delay = rapid.SampledFrom(slowDelays).Draw(t, "delay")
		}
		return st
	default:
		return Step{Kind: k}
	}
}
