package bench

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// Machine describes where the figures were measured.
type Machine struct {
	CPU      string
	Cores    int
	MemoryGB float64
	Go       string
	Postgres string // version and source
	Commit   string
}

// ThisMachine reads /proc for the CPU and memory.
func ThisMachine(postgres, commit string) Machine {
	m := Machine{Cores: runtime.NumCPU(), Go: runtime.Version(), Postgres: postgres, Commit: commit, CPU: "unknown"}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb float64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %f kB", &kb); err == nil {
			m.MemoryGB = kb / (1 << 20)
		}
	}
	return m
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// Markdown writes BENCHMARKS.md.
func (r *Report) Markdown(w io.Writer, m Machine, command string) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("# Benchmarks")
	p("")
	p("Regenerate with `%s` (about %v on this machine). Every figure below comes from that one run, measured side by side.", command, r.Took.Round(time.Second))
	p("")
	p("Measured %s on: %s, %d cores, %.0f GiB; %s; PostgreSQL %s; commit %s.",
		r.Started.UTC().Format("2006-01-02"), m.CPU, m.Cores, m.MemoryGB, m.Go, m.Postgres, m.Commit)
	p("")
	p("## Throughput and startup")
	p("")
	p("| what | figure | how |")
	p("|---|---|---|")
	p("| cluster ready | median %s, max %s | `pgprov.Start` to a connectable server, 5 starts (a throwaway cluster from the cached template data dir, or a container, or a URL) |",
		secs(median(r.ClusterReady)), secs(maxOf(r.ClusterReady)))
	p("| fault-free steps/s | %.0f | the reference, %d checks of seed 1: every action, its read-back and every safety check, plus the drain (%d steps in %s) |",
		r.FaultFree.Rate(), r.FaultFree.Checks, r.FaultFree.Steps, secs(r.FaultFree.Took))
	p("| fault-injected steps/s | %.0f | the same with partitions, lost replies, broker faults, crashes mid-request and database crashes (%d checks, %d steps in %s) |",
		r.Faulted.Rate(), r.Faulted.Checks, r.Faulted.Steps, secs(r.Faulted.Took))
	p("| faulted / fault-free | %.2f | a blackholed call costs its whole deadline, a crashed database its recovery |", r.Faulted.Rate()/r.FaultFree.Rate())
	p("")
	p("## Time to kill, and the soak baseline")
	p("")
	p("Harness: `properties.Run` on the mutant, seeds 1..%d, no shrinking; the time and checks until the first failure, which must be the mutant's own property. Mutants that only faults expose run with faults on, the others without.", r.Seeds)
	p("")
	p("Soak baseline: what teams write today (`internal/soak`). Producer, two dispatchers and two consumers loop concurrently while a fixed rotation breaks and heals the same faults (every fault kind on every link in turn, broker refusals and lost acks, dispatcher crashes, consumer crashes before and after commit). Every %v it heals, drains and checks the end state only: lost, duplicated or phantom effects per payment. No model, no shrinking.", 3*time.Second)
	p("")
	p("Both get %v per mutant (per seed for the harness).", r.Budget)
	p("")
	p("| mutant | property | harness kills | median | max | checks (median) | soak | soak time | soak found |")
	p("|---|---|---|---|---|---|---|---|---|")
	hk, sk := 0, 0
	var hm, sm []time.Duration
	for _, k := range r.Kills {
		soakVerdict, soakTime := "survived", "-"
		if k.Soak.Killed {
			sk++
			soakVerdict, soakTime = "killed", secs(k.Soak.ToFail)
		}
		med, max := "-", "-"
		if len(k.Times) > 0 {
			hk++
			med, max = secs(k.Median()), secs(k.Max())
		}
		if k.Soak.Killed && len(k.Times) > 0 {
			hm, sm = append(hm, k.Median()), append(sm, k.Soak.ToFail)
		}
		kills := fmt.Sprintf("%d/%d", len(k.Times), r.Seeds)
		if len(k.Wrong) > 0 {
			kills += fmt.Sprintf(" (%d by %s)", len(k.Wrong), strings.Join(k.Wrong, ", "))
		}
		p("| %s | %s | %s | %s | %s | %d | %s | %s | %s |", k.Mutant.Name, k.Mutant.Kills, kills, med, max,
			medianInt(k.Checks), soakVerdict, soakTime, escape(k.Soak.Problem))
	}
	p("")
	p("Killed: harness %d of %d mutants, soak %d of %d.", hk, len(r.Kills), sk, len(r.Kills))
	if len(hm) > 0 && len(sm) > 0 {
		p("Over the %d mutants both killed, median time to kill: harness %s, soak %s (soak / harness = %.1f×).",
			len(hm), secs(median(hm)), secs(median(sm)), median(sm).Seconds()/median(hm).Seconds())
	}
	p("")
	p("A soak kill says only that some payment ended wrong; the harness names the property, the step, and shrinks the history to a few steps.")
	if r.LoopKills != nil {
		p("")
		b.WriteString(r.LoopMarkdown())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func escape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func maxOf(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

func medianInt(xs []int) int {
	ds := make([]time.Duration, len(xs))
	for i, x := range xs {
		ds[i] = time.Duration(x)
	}
	return int(median(ds))
}
