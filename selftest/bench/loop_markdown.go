package bench

import (
	"fmt"
	"strings"
	"time"
)

// LoopHeading starts the loop contract's section of BENCHMARKS.md.
const LoopHeading = "## Loop contract: time to kill, and the loop soak"

// LoopMarkdown is the loop contract's section, from its heading on.
func (r *Report) LoopMarkdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p(LoopHeading)
	p("")
	p("Measured %s, in %v. Harness: `loopcheck.Run` on each loop mutant (`loopsubjects.Mutants`), seeds 1..%d, no shrinking, %v per seed; the time and schedules until the first failure, which must be the mutant's own property. Real time: the same seed does not replay exactly.",
		r.Started.UTC().Format("2006-01-02"), r.Took.Round(time.Second), r.Seeds, r.Budget)
	p("")
	p("Loop soak: the chaos test teams write for a relay loop today, `bench.loopSoak`: a fixed rotation of commits, a dispatcher partition, a relay kill and restart, a broker outage and a consumer reset, in UTC, on a prompt broker that refuses no event for good; then heal, drain and judge the end state with the same judge. Replayed over and over for %v.", r.Budget)
	p("")
	p("| loop mutant | property | harness kills | median | max | schedules (median) | loop soak | soak time | soak rounds | soak found |")
	p("|---|---|---|---|---|---|---|---|---|---|")
	hk, sk := 0, 0
	for _, k := range r.LoopKills {
		verdict, t := "survived", "-"
		if k.SoakKilled {
			sk++
			verdict, t = "killed", secs(k.SoakToFail)
		}
		med, mx := "-", "-"
		if len(k.Times) > 0 {
			hk++
			med, mx = secs(k.Median()), secs(maxOf(k.Times))
		}
		kills := fmt.Sprintf("%d/%d", len(k.Times), r.Seeds)
		if len(k.Wrong) > 0 {
			kills += fmt.Sprintf(" (%d by %s)", len(k.Wrong), strings.Join(k.Wrong, ", "))
		}
		p("| %s | %s | %s | %s | %s | %d | %s | %s | %d | %s |", k.Mutant.Name, k.Mutant.Kills, kills, med, mx,
			medianInt(k.Checks), verdict, t, k.SoakRounds, escape(k.SoakFound))
	}
	p("")
	p("Killed: loop contract %d of %d loop mutants, loop soak %d of %d.", hk, len(r.LoopKills), sk, len(r.LoopKills))
	if len(r.LoopRates) > 0 {
		p("")
		p("Schedules per minute: the reference relay (`refloop.New`) through `loopcheck.Run`, seed 1, the same schedules (as many as the default `run` checks, as a sample) one at a time, at `loopcheck.DefaultParallel()` (2 per core, at most 4) and at twice that, side by side in this run. A schedule mostly waits (leases, backoff, recovery), so runners on their own databases overlap; CPU is the machine's, busy meanwhile.")
		p("")
		p("| schedules at once | schedules | time | per minute | × one at a time | CPU busy | failures |")
		p("|---|---|---|---|---|---|---|")
		for _, lr := range r.LoopRates {
			failed := "none"
			if lr.Failed != "" {
				failed = lr.Failed
			}
			cpu := "-"
			if lr.CPU >= 0 {
				cpu = fmt.Sprintf("%.0f%%", 100*lr.CPU)
			}
			p("| %d | %d | %s | %.0f | %.1f | %s | %s |", lr.K, lr.Schedules, secs(lr.Took), lr.PerMinute(), lr.PerMinute()/r.LoopRates[0].PerMinute(), cpu, failed)
		}
	}
	return b.String()
}
