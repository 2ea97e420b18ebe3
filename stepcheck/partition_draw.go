package stepcheck

import (
	"slices"
	"time"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
)

// drawPartition draws the link and the fault of a Partition. The fixed
// draw is the one before swarm testing. The swarm draw takes its kind
// from the check's swarm and leans to where a fault matters: half the
// time a hot link (the producer, whose COMMIT may be lost; a dispatcher
// holding a published claim, whose mark comes next), and it strikes at
// the next COMMIT half the time, at the next statement (a claim's or a
// mark's) a quarter, after a count of requests the rest.
func (m *machine) drawPartition(t *rapid.T) (harness.Actor, faults.Fault) {
	if m.opts.Draw == DrawFixed {
		return m.drawPartitionFixed(t)
	}
	kinds := m.swarm.kindsOn()
	if len(kinds) == 0 {
		skip("no network fault in this check")
	}
	a := m.drawLink(t)
	f := faults.Fault{Kind: rapid.SampledFrom(kinds).Draw(t, "kind")}
	switch rapid.IntRange(0, 3).Draw(t, "strikes") {
	case 0, 1:
		f.AtCommit = true
	case 2:
		f.AtStatement = true
	default:
		f.After = rapid.IntRange(0, 6).Draw(t, "after requests")
	}
	m.drawDelay(t, &f)
	return a, f
}

// drawLink draws the link to partition, half the time among the hot ones.
func (m *machine) drawLink(t *rapid.T) harness.Actor {
	hot := []harness.Actor{{Role: harness.Producer}}
	for d := range m.held {
		if !m.crashed[d] && slices.ContainsFunc(m.held[d], func(h held) bool { return h.state != unpublished }) {
			hot = append(hot, harness.Actor{Role: harness.Dispatcher, N: d})
		}
	}
	if rapid.Bool().Draw(t, "hot link") {
		return rapid.SampledFrom(hot).Draw(t, "link")
	}
	return rapid.SampledFrom(m.faultable()).Draw(t, "link")
}

// drawPartitionFixed is the draw before swarm testing.
func (m *machine) drawPartitionFixed(t *rapid.T) (harness.Actor, faults.Fault) {
	a := rapid.SampledFrom(m.faultable()).Draw(t, "link")
	f := faults.Fault{
		Kind:  rapid.SampledFrom(faults.All).Draw(t, "kind"),
		After: rapid.IntRange(0, 6).Draw(t, "after requests"), // a cold transaction is 6 requests
	}
	if f.Kind == faults.LostReply {
		f.AtCommit = rapid.Bool().Draw(t, "at commit")
	}
	m.drawDelay(t, &f)
	return a, f
}

// drawDelay draws a Latency's delay: either one the call survives, or one
// past its deadline. The one it survives is 5 ms a request: ten times a
// round trip here, enough to let another actor's request pass a delayed
// one, and not so long that a slow link is mostly waiting (at 20 ms a
// transaction of six requests waited 120 ms).
func (m *machine) drawDelay(t *rapid.T, f *faults.Fault) {
	if f.Kind == faults.Latency {
		f.DelayMs = rapid.SampledFrom([]int{survivableDelayMs, int(m.opts.CallTimeout/time.Millisecond) * 3 / 2}).Draw(t, "delay ms")
	}
}

// survivableDelayMs is the delay of a Latency that the call survives.
const survivableDelayMs = 5
