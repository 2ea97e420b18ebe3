package main

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

func benchCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", "Measures time to kill per mutant (median and max over seeds), steps/s with and without\nfaults, cluster-ready time, and the soak baseline under the same budget; writes BENCHMARKS.md.", stdout)
	seeds := fs.Int("seeds", 10, "seeds per mutant")
	budget := fs.Duration("budget", 30*time.Second, "time per mutant and seed (harness) and per mutant (soak)")
	out := fs.String("out", "BENCHMARKS.md", "where to write the report ('-' for stdout)")
	only := fs.String("only", "", "comma-separated mutant names for the time-to-kill rows (default: all); throughput, check lengths and the gate are measured all the same")
	noLoop := fs.Bool("no-loop", false, "skip the loop mutants' rows")
	loopOnly := fs.Bool("loop-only", false, "measure only the loop mutants' rows, and replace only their section of --out")
	url := fs.String("database-url", "", "PostgreSQL server URL (default: $OUTBOXCHECK_DATABASE_URL, else Docker, else local binaries)")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if *seeds < 1 || *budget <= 0 {
		return usageErrorf("--seeds and --budget must be positive")
	}
	ms, err := mutantList(*only)
	if err != nil {
		return err
	}
	if *out != "-" {
		if err := checkWritable(filepath.Dir(*out)); err != nil {
			return err
		}
	}
	ses, err := openSession(*url, stderr, false)
	if err != nil {
		return err
	}
	defer ses.close()
	ctx, cluster := ses.ctx, ses.cluster
	rep, err := bench.Run(ctx, bench.Config{Cluster: cluster, URL: *url, Seeds: *seeds, Budget: *budget, Mutants: ms, Log: stderr,
		Loop: !*noLoop && *only == "", LoopOnly: *loopOnly, GateChecks: defaultChecks})
	if err != nil {
		return infraError(err)
	}
	var b bytes.Buffer
	cmd := "go run -buildvcs=true ./cmd/outboxcheck bench" // -buildvcs: go run stamps no commit otherwise
	if len(args) > 0 {
		cmd += " " + strings.Join(args, " ")
	}
	m := bench.ThisMachine(fmt.Sprintf("%s (%s)", cluster.Version, cluster.Source), toolVersion())
	if *loopOnly {
		if err := spliceLoop(&b, *out, rep); err != nil {
			return err
		}
	} else if err := rep.Markdown(&b, m, cmd); err != nil {
		return err
	}
	if *out == "-" {
		_, err = stdout.Write(b.Bytes())
		return err
	}
	if err := reports.WriteFile(*out, b.Bytes()); err != nil {
		return usageErrorf("write %s: %v", *out, err)
	}
	fmt.Fprintf(stdout, "wrote %s\n", *out)
	return nil
}

// mutantList resolves --only; nil means all.
func mutantList(only string) ([]mutants.Mutant, error) {
	if only == "" {
		return nil, nil
	}
	var ms []mutants.Mutant
	for _, name := range strings.Split(only, ",") {
		m, ok := mutants.ByName(strings.TrimSpace(name))
		if !ok {
			return nil, usageErrorf("unknown mutant %q: want one of %s", name, strings.Join(mutantNames(), ", "))
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// spliceLoop writes to b the report at out with its loop section (from
// bench.LoopHeading on) replaced by rep's.
func spliceLoop(b *bytes.Buffer, out string, rep *bench.Report) error {
	old := []byte{}
	if out != "-" {
		var err error
		if old, err = os.ReadFile(out); err != nil && !os.IsNotExist(err) {
			return usageErrorf("read %s: %v", out, err)
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
