package gate

import (
	"slices"
	"strings"

	"github.com/outboxcheck/outboxcheck/adapters/loopsubjects"
	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/impl/mutants"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// SubjectByName resolves a step-contract subject: the reference, or a
// mutant of it; the bool says it needs concurrent steps.
func SubjectByName(name string) (stepcheck.NewSubject, bool, error) {
	if name == "reference" {
		return reference.New, false, nil
	}
	if m, ok := mutants.ByName(name); ok {
		return reference.Mutated(m), m.NeedsConcurrency, nil
	}
	if IsLoopSubject(name) {
		return nil, false, Usagef("%s is a loop subject: run it with --loop", name)
	}
	return nil, false, Usagef("unknown subject %q: want reference or one of %s (loop subjects run with --loop)", name, strings.Join(MutantNames(), ", "))
}

// MutantNames are the step contract's mutants, sorted.
func MutantNames() []string {
	var names []string
	for _, m := range mutants.All {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	return names
}

// MutantList resolves a comma-separated list of mutant names; nil
// means all.
func MutantList(only string) ([]mutants.Mutant, error) {
	if only == "" {
		return nil, nil
	}
	var ms []mutants.Mutant
	for _, name := range strings.Split(only, ",") {
		m, ok := mutants.ByName(strings.TrimSpace(name))
		if !ok {
			return nil, Usagef("unknown mutant %q: want one of %s; or of the loop contract's: %s", name, strings.Join(MutantNames(), ", "), strings.Join(loopMutantNames(), ", "))
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// loopMutantNames are the loop contract's mutants, in their list's order.
func loopMutantNames() []string {
	var names []string
	for _, m := range loopsubjects.Mutants {
		names = append(names, m.Name)
	}
	return names
}
