package bench

import (
	"fmt"
	"strings"
	"time"
)

// killMarkdown writes the time-to-kill table: the default draw, the fixed
// draw and the soak baseline, mutant by mutant.
func (r *Report) killMarkdown(p func(string, ...any)) {
	if len(r.Kills) == 0 {
		return
	}
	p("## Time to kill: swarm draw, fixed draw, and the soak baseline")
	p("")
	p("Harness: `stepcheck.Run` on the mutant, seeds 1..%d, no shrinking; the time and checks until the first failure, which must be the mutant's own property. Mutants that only faults expose run with faults on, the others without. **Swarm** is the default draw (`stepcheck.DrawSwarm`: each check draws which action and fault kinds it uses; partitions lean to the COMMIT and the mark); **fixed** is the draw before it (`stepcheck.DrawFixed`: one mix for every check), run side by side.", r.Seeds)
	p("")
	p("Soak baseline: what teams write today (`selftest/soak`). Producer, two dispatchers and two consumers loop concurrently while a fixed rotation breaks and heals the same faults (every fault kind on every link in turn, broker refusals and lost acks, dispatcher crashes, consumer crashes before and after commit). Every %v it heals, drains and checks the end state only: lost, duplicated or phantom effects per payment. No model, no shrinking.", 3*time.Second)
	p("")
	p("Each gets %v per mutant (per seed for the harness).", r.Budget)
	p("")
	p("| mutant | property | swarm kills | median | max | checks (median) | fixed kills | median | max | checks (median) | soak | soak time | soak found |")
	p("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	hk, fk, sk := 0, 0, 0
	var hm, sm, hAll, fAll []time.Duration
	for _, k := range r.Kills {
		soakVerdict, soakTime := "survived", "-"
		if k.Soak.Killed {
			sk++
			soakVerdict, soakTime = "killed", secs(k.Soak.ToFail)
		}
		if len(k.Harness.Times) > 0 {
			hk++
		}
		if len(k.Fixed.Times) > 0 {
			fk++
		}
		if k.Soak.Killed && len(k.Harness.Times) > 0 {
			hm, sm = append(hm, k.Harness.Median()), append(sm, k.Soak.ToFail)
		}
		hAll, fAll = append(hAll, k.Harness.Times...), append(fAll, k.Fixed.Times...)
		p("| %s | %s | %s | %d | %s | %d | %s | %s | %s |", k.Mutant.Name, k.Mutant.Kills,
			r.killCells(k.Harness), medianInt(k.Harness.Checks), r.killCells(k.Fixed), medianInt(k.Fixed.Checks),
			soakVerdict, soakTime, escape(k.Soak.Problem))
	}
	p("")
	p("Killed: swarm %d of %d mutants, fixed %d of %d, soak %d of %d.", hk, len(r.Kills), fk, len(r.Kills), sk, len(r.Kills))
	p("Over every seed that killed: median %s (swarm) against %s (fixed); slowest %s against %s.",
		secs(median(hAll)), secs(median(fAll)), secs(maxOf(hAll)), secs(maxOf(fAll)))
	if len(hm) > 0 && len(sm) > 0 {
		p("Over the %d mutants both the swarm harness and the soak killed, median time to kill: harness %s, soak %s (soak / harness = %.1f×).",
			len(hm), secs(median(hm)), secs(median(sm)), median(sm).Seconds()/median(hm).Seconds())
	}
	p("")
	p("A soak kill says only that some payment ended wrong; the harness names the property, the step, and shrinks the history to a few steps.")
}

// killCells is "kills | median | max" of one draw.
func (r *Report) killCells(k Kills) string {
	med, mx := "-", "-"
	if len(k.Times) > 0 {
		med, mx = secs(k.Median()), secs(k.Max())
	}
	kills := fmt.Sprintf("%d/%d", len(k.Times), r.Seeds)
	if len(k.Wrong) > 0 {
		kills += fmt.Sprintf(" (%d by %s)", len(k.Wrong), strings.Join(k.Wrong, ", "))
	}
	return kills + " | " + med + " | " + mx
}
