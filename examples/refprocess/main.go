// Command refprocess is the reference relay (adapters/refloop), or one of
// its loop mutants, as a process subject: outboxcheck starts it once per
// role and speaks protocol outboxcheck/1 with it (proccheck/serve). Its
// verdicts must be those of the same relay run in process.
//
//	go build -o /tmp/refprocess ./examples/refprocess
//	outboxcheck run --process '/tmp/refprocess -mutant delete-dead'
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/proccheck/serve"
)

func main() {
	mutant := flag.String("mutant", "", "a loop mutant's name (refloop.Mutants); empty: the reference relay")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: refprocess [-mutant NAME] producer|relay|consumer|operator")
		os.Exit(2)
	}
	newSubject := loopcheck.NewSubject(refloop.New)
	if *mutant != "" {
		m, ok := refloop.ByName(*mutant)
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown mutant %q\n", *mutant)
			os.Exit(2)
		}
		newSubject = m.New
	}
	serve.Main(newSubject)
}
