package gate

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/outboxcheck/outboxcheck/impl/mutants"
	"github.com/outboxcheck/outboxcheck/reports"
	"github.com/outboxcheck/outboxcheck/selftest/bench"
)

// BenchConfig is what `outboxcheck bench` measures.
type BenchConfig struct {
	URL        string        // PostgreSQL server URL; "": $OUTBOXCHECK_DATABASE_URL, Docker or local binaries
	Seeds      int           // seeds per mutant
	Budget     time.Duration // time per mutant and seed (harness) and per mutant (soak)
	Out        string        // where BENCHMARKS.md goes; "-" for stdout
	Only       string        // comma-separated mutant names, of either contract, for the time-to-kill rows; "": all
	NoLoop     bool          // skip the loop mutants' rows
	LoopOnly   bool          // measure only the loop rows and replace only their section of Out
	GateChecks int           // the default gate's checks, measured as such
	Args       []string      // the command line, written into the report
}

// Bench measures time to kill, throughput, check lengths and the soak
// baseline, and writes the report to c.Out.
func Bench(c BenchConfig, stdout, stderr io.Writer) error {
	if c.Seeds < 1 || c.Budget <= 0 {
		return Usagef("--seeds and --budget must be positive")
	}
	stepOnly, loopOnly := splitOnly(c.Only)
	ms, err := MutantList(stepOnly)
	if err != nil {
		return err
	}
	if c.Only != "" && ms == nil {
		ms = []mutants.Mutant{} // loop mutants only
	}
	if c.Out != "-" {
		if err := CheckWritable(filepath.Dir(c.Out)); err != nil {
			return err
		}
	}
	ses, err := openSession(c.URL, stderr, false, loopSettings(!c.NoLoop, loopOnly))
	if err != nil {
		return err
	}
	defer ses.close()
	ctx, cluster := ses.ctx, ses.cluster
	rep, err := bench.Run(ctx, bench.Config{Cluster: cluster, URL: c.URL, Seeds: c.Seeds, Budget: c.Budget, Mutants: ms, Log: stderr,
		Loop: !c.NoLoop && (c.Only == "" || loopOnly != nil), LoopOnly: c.LoopOnly, LoopMutants: loopOnly, GateChecks: c.GateChecks})
	if err != nil {
		return infraError(err)
	}
	var b bytes.Buffer
	cmd := "go run -buildvcs=true ./cmd/outboxcheck bench" // -buildvcs: go run stamps no commit otherwise
	if len(c.Args) > 0 {
		cmd += " " + strings.Join(c.Args, " ")
	}
	m := bench.ThisMachine(fmt.Sprintf("%s (%s)", cluster.Version, cluster.Source), Version())
	if c.LoopOnly {
		if err := spliceLoop(&b, c.Out, rep); err != nil {
			return err
		}
	} else if err := rep.Markdown(&b, m, cmd); err != nil {
		return err
	}
	if c.Out == "-" {
		_, err = stdout.Write(b.Bytes())
		return err
	}
	if err := reports.WriteFile(c.Out, b.Bytes()); err != nil {
		return Usagef("write %s: %v", c.Out, err)
	}
	fmt.Fprintf(stdout, "wrote %s\n", c.Out)
	return nil
}

// spliceLoop writes to b the report at out with its loop section (from
// bench.LoopHeading on) replaced by rep's.
func spliceLoop(b *bytes.Buffer, out string, rep *bench.Report) error {
	old := []byte{}
	if out != "-" {
		var err error
		if old, err = os.ReadFile(out); err != nil && !os.IsNotExist(err) {
			return Usagef("read %s: %v", out, err)
		}
	}
	if i := bytes.Index(old, []byte(bench.LoopHeading)); i >= 0 {
		old = old[:i]
	} else if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n\n")) {
		old = append(old, '\n')
	}
	b.Write(old)
	b.WriteString(rep.LoopMarkdown())
	return nil
}
