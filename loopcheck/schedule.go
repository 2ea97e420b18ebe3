package loopcheck

import (
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/faults"
)

// Step is one event of a schedule.
type Step struct {
	Kind  string      // commit, rollback, partition, heal, kill, restart, broker-down, broker-up, redeliver, pause
	N     int         // commit: payments; kill/restart: dispatcher; redeliver: message index
	Link  string      // partition, heal: the actor's link
	Fault faults.Kind // partition
	After int         // partition: requests before it strikes
	Pause time.Duration
}

func (s Step) String() string {
	switch s.Kind {
	case "commit":
		return fmt.Sprintf("commit %d", s.N)
	case "partition":
		return fmt.Sprintf("partition %s %s after %d", s.Link, s.Fault, s.After)
	case "heal":
		return "heal " + s.Link
	case "kill", "restart":
		return fmt.Sprintf("%s dispatcher-%d", s.Kind, s.N)
	case "redeliver":
		return fmt.Sprintf("redeliver message #%d", s.N+1)
	case "pause":
		return "pause " + s.Pause.String()
	}
	return s.Kind
}

// Schedule is what one check does, in order.
type Schedule []Step

// draw makes a schedule from rapid's choices; it starts with a commit so
// every schedule has something to lose.
func draw(t *rapid.T, links []string, dispatchers int) Schedule {
	n := rapid.IntRange(4, 24).Draw(t, "steps")
	s := Schedule{{Kind: "commit", N: 1}}
	for range n {
		var st Step
		switch k := rapid.SampledFrom([]string{"commit", "commit", "commit", "rollback", "partition", "heal",
			"kill", "restart", "broker-down", "broker-up", "redeliver", "pause", "pause"}).Draw(t, "kind"); k {
		case "commit":
			st = Step{Kind: k, N: rapid.IntRange(1, 3).Draw(t, "payments")}
		case "partition":
			st = Step{Kind: k, Link: rapid.SampledFrom(links).Draw(t, "link"), Fault: rapid.SampledFrom(faults.All).Draw(t, "fault"),
				After: rapid.IntRange(0, 4).Draw(t, "after")}
		case "heal":
			st = Step{Kind: k, Link: rapid.SampledFrom(links).Draw(t, "link")}
		case "kill", "restart":
			st = Step{Kind: k, N: rapid.IntRange(0, dispatchers-1).Draw(t, "dispatcher")}
		case "redeliver":
			st = Step{Kind: k, N: rapid.IntRange(0, 50).Draw(t, "message")}
		case "pause":
			st = Step{Kind: k, Pause: time.Duration(rapid.IntRange(10, 400).Draw(t, "ms")) * time.Millisecond}
		default:
			st = Step{Kind: k}
		}
		s = append(s, st)
	}
	return s
}
