package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/outboxcheck/outboxcheck/gate"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// newFlags is a command's flag set; errors are returned, never exit. The
// usage is printed for -h (or --help) only, to stdout, as the top-level
// --help prints its own: a help request is not an error. A bad flag gets
// one line on stderr (see parse).
func newFlags(name, synopsis string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("outboxcheck "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // flag's own error line and usage dump
	fs.Usage = func() {}
	usages.Store(fs, func() {
		fmt.Fprintf(stdout, "usage: outboxcheck %s [flags]\n\n%s\n\nflags:\n", name, synopsis)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	})
	return fs
}

// usages holds each flag set's usage printer.
var usages sync.Map // *flag.FlagSet → func()

// parse parses args and allows no arguments besides flags.
func parse(fs *flag.FlagSet, args []string) (help bool, err error) {
	if help, err := parseFlags(fs, args); help || err != nil {
		return help, err
	}
	if fs.NArg() > 0 {
		return false, usageErrorf("unexpected argument %q (see '%s -h')", fs.Arg(0), fs.Name())
	}
	return false, nil
}

// helpFlag reports whether arg asks for help as the flag package reads
// it: -h or -help, with one dash or two.
func helpFlag(arg string) bool {
	switch arg {
	case "-h", "--h", "-help", "--help":
		return true
	}
	return false
}

// parseFlags parses args: -h prints the usage and is not an error; a bad
// flag is a usage error of one line. Flags may come after positional
// arguments too (`replay DIR --times 2`), up to a "--".
func parseFlags(fs *flag.FlagSet, args []string) (help bool, err error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				if u, ok := usages.Load(fs); ok {
					u.(func())()
				}
				return true, nil
			}
			return false, usageErrorf("%v (see '%s -h')", err, fs.Name())
		}
		rest := fs.Args()
		if len(rest) == 0 || len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		positional, args = append(positional, rest[0]), rest[1:]
	}
	return false, fs.Parse(append([]string{"--"}, positional...))
}

// budgetFlags are the rapid budget flags every command shares.
type budgetFlags struct {
	checks, steps int
	seed          string
	shrink        time.Duration
}

func (b *budgetFlags) register(fs *flag.FlagSet, checks int) {
	fs.IntVar(&b.checks, "checks", checks, "checks to run (each: reset, a random sequence of actions, drain)")
	fs.IntVar(&b.steps, "steps", 30, "average actions per check")
	fs.StringVar(&b.seed, "seed", "", "rapid seed (a number); empty draws one")
	fs.DurationVar(&b.shrink, "shrink-time", 30*time.Second, "how long to shrink a failure; 0: report it as found, unshrunk")
}

func (b *budgetFlags) budget() (harness.Budget, error) {
	if b.checks < 1 {
		return harness.Budget{}, usageErrorf("--checks must be at least 1, got %d", b.checks)
	}
	if b.steps < 1 || b.steps > stepcheck.MaxSteps {
		return harness.Budget{}, usageErrorf("--steps must be from 1 to %d, got %d", stepcheck.MaxSteps, b.steps)
	}
	if b.shrink < 0 {
		return harness.Budget{}, usageErrorf("--shrink-time must not be negative, got %v", b.shrink)
	}
	out := harness.Budget{Checks: b.checks, Steps: b.steps, ShrinkTime: b.shrink}
	if b.shrink == 0 {
		out.ShrinkTime = gate.NoShrinking // Budget's own zero would keep rapid's 30 s
	}
	if s := strings.TrimSpace(b.seed); s != "" {
		var err error
		if out.Seed, err = parseSeed(s); err != nil {
			return harness.Budget{}, err
		}
	}
	return out, nil
}

func parseSeed(s string) (uint64, error) {
	var seed uint64
	if _, err := fmt.Sscan(s, &seed); err != nil || fmt.Sprint(seed) != s || seed == 0 {
		return 0, usageErrorf("--seed must be a positive integer, got %q", s)
	}
	return seed, nil
}
