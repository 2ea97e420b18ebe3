// Package loopsubjects lists what the CLI, the kill matrix and the
// benchmarks run through the loop contract by name: the subjects that
// must pass (the reference relay, its slow-but-correct control, the CDC
// relay) and the mutants that must be killed (the reference relay's and
// the CDC relay's), each with what it declares and what it needs of the
// server.
package loopsubjects

import (
	"slices"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/cdcloop"
	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// Subject is a correct subject.
type Subject struct {
	Name     string
	New      loopcheck.NewSubject
	Recovery time.Duration
	Settings []string // server settings it needs
	// DedupeWindow, if set, says it needs a real broker (JetStream), and
	// is the window it runs with unless one is given.
	DedupeWindow time.Duration
}

// Passing are the subjects that must pass, the reference relay first.
var Passing = []Subject{
	{Name: "reference", New: refloop.New, Recovery: refloop.Recovery},
	{Name: "slow-rescan", New: refloop.SlowRescan, Recovery: refloop.SlowRescanRecovery},
	// The reference stopped through its own Stop (a Close): the correct
	// Stopper that close-acks-unsent breaks, and what stop-mid-batch
	// steps must not fail.
	{Name: "graceful", New: refloop.Graceful, Recovery: refloop.Recovery},
	{Name: "cdc", New: cdcloop.New, Recovery: cdcloop.Recovery, Settings: cdcloop.ServerSettings},
	// The reference leaning on JetStream's deduplication, resending only
	// within its window: the correct Deduper that dedupe-past-window
	// breaks.
	{Name: "dedupe", New: refloop.Dedupe, Recovery: refloop.Recovery, DedupeWindow: refloop.DedupeRunWindow},
}

// Mutants are the loop mutants, the reference relay's then the CDC
// relay's.
var Mutants = slices.Concat(refloop.Mutants, cdcloop.Mutants)

// ByName is the subject or mutant called name, as a mutant (Kills empty
// for a passing one).
func ByName(name string) (refloop.Mutant, bool) {
	for _, s := range Passing {
		if s.Name == name {
			return refloop.Mutant{Name: s.Name, New: s.New, Recovery: s.Recovery, Settings: s.Settings, DedupeWindow: s.DedupeWindow}, true
		}
	}
	for _, m := range Mutants {
		if m.Name == name {
			return m, true
		}
	}
	return refloop.Mutant{}, false
}

// Settings are the server settings the named subjects and mutants need,
// each once, in order.
func Settings(names ...string) []string {
	var out []string
	for _, n := range names {
		if m, ok := ByName(n); ok {
			for _, s := range m.Settings {
				if !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// Names are every subject's and mutant's name: the passing ones first.
func Names() []string {
	var out []string
	for _, s := range Passing {
		out = append(out, s.Name)
	}
	for _, m := range Mutants {
		out = append(out, m.Name)
	}
	return out
}
