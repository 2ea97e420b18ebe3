package stepcheck

import (
	"maps"
	"slices"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/harness"
)

// The actions of a check run in a loop of ours, not rapid's t.Repeat, and
// stop on harness's stop coin (harness/stopcoin.go): rapid shrinks each
// "go on" coin to 0 in one replay, and deletes whole steps.

// actionTries bounds the draws of a step whose actions do not apply.
const actionTries = 100

// MaxSteps is harness.MaxSteps.
const MaxSteps = harness.MaxSteps

// notApplicable is the panic of skip, caught by the step loop.
type notApplicable string

// skip ends an action whose precondition does not hold; the step draws
// another action. Call it before the action changes anything.
func skip(why string) { panic(notApplicable(why)) }

// steps runs check, then actions drawn by rapid, each followed by check,
// until the stop coin comes up or stop says so.
func steps(t *rapid.T, actions map[string]func(*rapid.T), check func(*rapid.T), stop func() bool) {
	names := slices.Sorted(maps.Keys(actions))
	pick := rapid.SampledFrom(names)
	lo := harness.StopBand(harness.AverageSteps())
	step := rapid.Custom(func(t *rapid.T) string {
		if harness.Stops(t, lo) {
			return ""
		}
		for range actionTries {
			name := pick.Draw(t, "action")
			if apply(t, actions[name]) {
				return name
			}
		}
		return "" // nothing applies: the check ends here
	})
	check(t)
	for !stop() && step.Draw(t, "step") != "" {
		check(t)
	}
}

// apply runs action; false if it did not apply (skip).
func apply(t *rapid.T, action func(*rapid.T)) (applied bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(notApplicable); !ok {
				panic(r)
			}
			applied = false
		}
	}()
	action(t)
	return true
}
