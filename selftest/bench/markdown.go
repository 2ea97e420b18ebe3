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
	r.speedMarkdown(p)
	r.killMarkdown(p)
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
