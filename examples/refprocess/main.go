// Command refprocess is one of outboxcheck's own loop subjects (the
// reference relay, the CDC relay) or loop mutants, by name
// (adapters/loopsubjects), as a process subject: outboxcheck starts it
// once per role and speaks protocol outboxcheck/1 with it
// (proccheck/serve). Its verdicts must be those of the same relay run in
// process.
//
//	go build -o /tmp/refprocess ./examples/refprocess
//	outboxcheck run --process '/tmp/refprocess -mutant delete-dead'
//	outboxcheck run --process '/tmp/refprocess -subject cdc' --pg-setting wal_level=logical
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/outboxcheck/outboxcheck/adapters/loopsubjects"
	"github.com/outboxcheck/outboxcheck/proccheck/serve"
)

func main() {
	name := flag.String("subject", "reference", "a loop subject's or loop mutant's name: "+strings.Join(loopsubjects.Names(), ", "))
	flag.StringVar(name, "mutant", "reference", "the same as -subject")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: refprocess [-subject NAME] producer|relay|consumer|operator")
		os.Exit(2)
	}
	m, ok := loopsubjects.ByName(*name)
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown subject %q: want one of %s\n", *name, strings.Join(loopsubjects.Names(), ", "))
		os.Exit(2)
	}
	serve.Main(m.New)
}
