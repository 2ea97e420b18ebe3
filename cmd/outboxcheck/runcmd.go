package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/impl/mutants"
	"github.com/outboxcheck/outboxcheck/properties"
)

// defaultChecks finishes in about a minute on a 2-core machine with every
// fault on (a faulted check costs ~0.35 s).
const defaultChecks = 150

func runCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", "Checks the reference implementation (or a mutant) against the model with rapid.", stderr)
	var b budgetFlags
	b.register(fs, defaultChecks)
	subject := fs.String("subject", "reference", "what to check: reference, or a mutant's name (see 'outboxcheck mutants -list')")
	noFaults := fs.Bool("no-faults", false, "turn off partitions, lost replies, broker faults and crashes")
	url := fs.String("database-url", "", "PostgreSQL server URL (default: $OUTBOXCHECK_DATABASE_URL, else Docker, else local binaries)")
	concurrent := fs.Bool("concurrent", false, "add steps where two dispatchers claim at the same instant (the database picks their order, so a seed replays up to that choice); on for mutants that need it")
	verbose := fs.Bool("v", false, "print rapid's output as it comes")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	budget, err := b.budget()
	if err != nil {
		return err
	}
	newSubject, needsConcurrency, err := subjectByName(*subject)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cluster, err := startCluster(ctx, *url)
	if err != nil {
		return err
	}
	defer cluster.Close()
	db, err := cluster.NewDatabase(ctx)
	if err != nil {
		return infraError(err)
	}
	defer db.Drop(context.Background())

	opts := properties.Options{DatabaseURL: db.URL, Faults: !*noFaults, Concurrent: *concurrent || needsConcurrency}
	if opts.Faults && cluster.Owned() {
		opts.CrashDatabase = cluster.Crash
	}
	restore := budget.Apply()
	defer restore()
	var live io.Writer
	if *verbose {
		live = stderr
	}
	fmt.Fprintf(stdout, "outboxcheck: %s on PostgreSQL %s (%s), %d checks, faults %v\n",
		*subject, cluster.Version, cluster.Source, budget.Checks, opts.Faults)
	rec := properties.NewRecorder("outboxcheck/"+*subject, live)
	sum := properties.Run(rec, newSubject, opts)
	fmt.Fprintf(stdout, "outboxcheck: %v\n", sum)
	return verdictOf(sum, rec, stdout)
}

// verdictOf prints the failure, if any, and turns it into the exit code.
func verdictOf(sum properties.Summary, rec *properties.Recorder, stdout io.Writer) error {
	f := sum.Failure
	switch {
	case f == nil && !rec.Failed():
		fmt.Fprintln(stdout, "outboxcheck: every property held")
		return nil
	case f == nil:
		return infraError(fmt.Errorf("rapid failed without a recorded failure:\n%s", rec.Output()))
	case f.Infrastructure:
		return infraError(fmt.Errorf("%s", f.Message))
	case f.Panic:
		fmt.Fprintf(stdout, "%s\n%s", f.Message, f.History.Story())
		return &codedError{code: exitViolation, err: fmt.Errorf("the subject panicked")}
	}
	fmt.Fprintf(stdout, "property violated: %s: %s\ncounterexample (%d steps, first failed at check %d):\n%s",
		f.Property, f.Message, len(f.History.Entries), sum.First.Check, f.History.Story())
	return &codedError{code: exitViolation, err: fmt.Errorf("property violated: %s", f.Property), quiet: false}
}

// subjectByName resolves --subject.
func subjectByName(name string) (properties.NewSubject, bool, error) {
	if name == "reference" {
		return reference.New, false, nil
	}
	if m, ok := mutants.ByName(name); ok {
		return reference.Mutated(m), m.NeedsConcurrency, nil
	}
	return nil, false, usageErrorf("unknown subject %q: want reference or one of %s", name, strings.Join(mutantNames(), ", "))
}

func mutantNames() []string {
	var names []string
	for _, m := range mutants.All {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	return names
}
