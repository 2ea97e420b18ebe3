package bench

import (
	"fmt"
	"strings"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// speedMarkdown writes the throughput, check-length and gate sections.
func (r *Report) speedMarkdown(p func(string, ...any)) {
	p("## Throughput and startup")
	p("")
	p("| what | figure | next to | how |")
	p("|---|---|---|---|")
	p("| cluster ready | median %s, max %s | | `pgscratch.Start` to a connectable server, 5 starts (a throwaway cluster from the cached template data dir, or a container, or a URL) |",
		secs(median(r.ClusterReady)), secs(maxOf(r.ClusterReady)))
	p("| bare SQL ops/s | %.0f | | commit, claim, mark published and handle straight through `impl`, no harness, warm sessions (%d ops in %s); the three rows below it ran in %d interleaved rounds |",
		r.Bare.Rate(), r.Bare.Ops, secs(r.Bare.Took), rounds)
	if r.SameWork.Ops > 0 {
		p("| the same work bare, ops/s | %.0f | %.2f of the four verbs' rate | the fault-free row's own subject calls (reset, commit, rollback, claim, mark, redrive, cleanup, handle; publishes and crashes done, not counted), recorded and replayed in order on a fresh database straight through a new reference subject, no harness: with its reconnects after each crash (%d ops in %s) |",
			r.SameWork.Rate(), r.SameWork.Rate()/r.Bare.Rate(), r.SameWork.Ops, secs(r.SameWork.Took))
	}
	p("| fault-free steps/s | %.0f | %s%.2f bare ops a step of the four verbs | the reference, %d checks of seeds 1..3: every action, its read-back and every safety check, plus the drain (%d steps in %s) |",
		r.FaultFree.Rate(), sameWorkCost(r), r.Bare.Rate()/r.FaultFree.Rate(), r.FaultFree.Checks, r.FaultFree.Steps, secs(r.FaultFree.Took))
	p("| fault-injected steps/s | %.0f | %.2f of fault-free; %.2f bare ops a step | the same with partitions, lost replies, broker faults, crashes mid-request and database crashes (%d checks, %d steps in %s) |",
		r.Faulted.Rate(), r.Faulted.Rate()/r.FaultFree.Rate(), r.Bare.Rate()/r.Faulted.Rate(), r.Faulted.Checks, r.Faulted.Steps, secs(r.Faulted.Took))
	p("")
	p("Where the wall time went (`harness.Summary.Time`; *model and rapid* is what no kind measures):")
	p("")
	p("- fault-free: %s", timing(r.FaultFree.Time))
	p("- fault-injected: %s", timing(r.Faulted.Time))
	p("")
	r.lengthMarkdown(p)
	r.gateMarkdown(p)
}

func timing(t *harness.Timing) string {
	if t == nil {
		return "-"
	}
	return t.String()
}

// lengthMarkdown writes steps/s against check length.
func (r *Report) lengthMarkdown(p func(string, ...any)) {
	if len(r.Lengths) == 0 {
		return
	}
	p("## Steps/s against check length")
	p("")
	p("Fault-free, the stop coin's average set to each length, seeds 1..%d, run in rounds with the throughput figures above (so each length saw the same machine); a check makes at most %d payments (`stepcheck.MaxPayments`), so a long check goes deeper on a bounded set of events.", rounds, stepcheck.MaxPayments)
	p("")
	p("| average length | checks | steps (mean per check) | steps/s | cost of a step against the shortest |")
	p("|---|---|---|---|---|")
	base := r.Lengths[0].Rate()
	for _, l := range r.Lengths {
		p("| %d | %d | %d (%d) | %.0f | %.2f× |", l.Average, l.Checks, l.Steps, l.Steps/max(l.Checks, 1), l.Rate(), base/l.Rate())
	}
	p("")
}

// gateMarkdown writes the default gate's time, the default draw's next to
// the fixed one's.
func (r *Report) gateMarkdown(p func(string, ...any)) {
	if len(r.Gates) == 0 {
		return
	}
	p("## The default gate")
	p("")
	p("`outboxcheck run` with its defaults, in process: a fresh PostgreSQL started and stopped, the reference under every fault, seed 1, %d checks; the same with the fixed draw next to it.", r.Gates[0].Checks)
	p("")
	p("| draw | wall time (with PostgreSQL's start) | steps | steps/s | fault kinds never struck | database crashes | fault coverage |")
	p("|---|---|---|---|---|---|---|")
	for _, g := range r.Gates {
		idle := "none"
		if len(g.Idle) > 0 {
			idle = kindList(g.Idle)
		}
		p("| %v | %s | %d | %.0f | %s | %d | %s |", g.Draw, secs(g.Took), g.Steps, float64(g.Steps)/g.Took.Seconds(), idle,
			g.Sum.Crashes.Database, escape(g.Sum.Network.String()))
	}
	p("")
}

func kindList(ks []faults.Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// sameWorkCost is the fault-free step's cost in bare operations of the
// same work, the operations a step makes, and the harness's time against
// the replay's, or "".
func sameWorkCost(r *Report) string {
	if r.SameWork.Ops == 0 {
		return ""
	}
	return fmt.Sprintf("**%.2f bare ops of the same work a step** (a step makes %.2f of the subject's database calls, a clock move or a publish none; the run %.2f× its replay); ",
		r.SameWork.Rate()/r.FaultFree.Rate(), float64(r.SameWork.Ops)/float64(r.FaultFree.Steps), r.FaultFree.Took.Seconds()/r.SameWork.Took.Seconds())
}
