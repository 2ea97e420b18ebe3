package loopcheck

import (
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
)

// Step is one event of a schedule.
type Step struct {
	// Kind is commit, rollback, partition, heal, kill, restart,
	// broker-down, broker-up, broker-slow, ack-lost, poison, redeliver,
	// crash-consumer, timezone, pause, stop (a graceful one), hold-tx or
	// wedge.
	Kind string `json:"kind"`
	N    int    `json:"n,omitempty"` // commit, broker-slow: payments; kill/restart: dispatcher; redeliver: message index; poison: payment
	// After is a partition's requests before it strikes, or a poison's
	// refusals (0: every publish, for ever).
	Link  string      `json:"link,omitempty"`  // partition, heal: the actor's link
	Fault faults.Kind `json:"fault,omitempty"` // partition
	After int         `json:"after,omitempty"`
	// For is a pause's length, or a broker outage's or slow window's
	// length of real time.
	For time.Duration `json:"for,omitempty"`
	// At is a consumer crash's failpoint.
	At harness.Failpoint `json:"at,omitempty"`
	// Delay is how late a slow broker acknowledges.
	Delay time.Duration `json:"delay,omitempty"`
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
	case "broker-slow":
		return fmt.Sprintf("broker-slow %v, acks %v late, %d payments into it", s.For, s.Delay, s.N)
	case "crash-consumer":
		return fmt.Sprintf("crash-consumer at %s on message #%d", s.At, s.N+1)
	case "poison":
		return fmt.Sprintf("poison %s %s", poisonWhich(s.N), poisonText(s.After))
	}
	return s.Kind
}

// Schedule is what one check does, in order.
type Schedule []Step

// maxScheduleSteps caps a schedule drawn by rapid.
const maxScheduleSteps = 400

var stepKinds = []string{"commit", "commit", "commit", "rollback", "partition", "heal",
	"kill", "restart", "broker-down", "broker-up", "broker-slow", "ack-lost", "poison", "redeliver", "crash-consumer", "pause", "pause",
	"stop", "hold-tx", "wedge"}

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

func poisonText(n int) string {
	if n == 0 {
		return "for ever"
	}
	return fmt.Sprintf("for %d publishes", n)
}

// draw makes a schedule from rapid's choices: the sessions' TimeZone, a
// commit, so every schedule has something to lose, then one rapid.Custom
// per step until the stop coin comes up, so shrinking deletes whole steps.
// The steps are drawn from a swarm (swarm), not from every kind.
func draw(t *rapid.T, links []string, dispatchers, avg int) Schedule {
	kinds := swarm(t)
	step := rapid.Custom(func(t *rapid.T) Step {
		if harness.DrawStop(t, avg) {
			return Step{}
		}
		return drawStep(t, kinds, links, dispatchers)
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
func swarm(t *rapid.T) []string {
	out := []string{}
	leftOut := map[string]bool{}
	for _, k := range stepKinds {
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

func drawStep(t *rapid.T, kinds, links []string, dispatchers int) Step {
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
		// one that never does tests the dead letter.
		st := Step{Kind: k, N: rapid.IntRange(0, 2).Draw(t, "payment")}
		if !rapid.Bool().Draw(t, "forever") {
			st.After = rapid.IntRange(1, 3).Draw(t, "refusals")
		}
		return st
	case "broker-slow":
		// Delays around the relays' own deadlines: from well within to
		// past a typical 2 s call timeout; and up to three payments
		// committed at once into the window, so that relays meet it, in
		// a batch (a window no publish meets tests nothing).
		return Step{Kind: k, For: ms(50, 1000, "slow-ms"), Delay: rapid.SampledFrom(slowDelays).Draw(t, "delay"),
			N: rapid.IntRange(0, 3).Draw(t, "payments into it")}
	default:
		return Step{Kind: k}
	}
}
