package stepcheck

import (
	"github.com/outboxcheck/outboxcheck/harness"
	"pgregory.net/rapid"
)

// AdvanceClock moves the harness's time, around the edges or freely.
//
// For a subject with a rescuer, the rescuer may run as the clock moves,
// in the same step: a rescuer runs on a cadence, when time has passed,
// and a lease that ends, is rescued and is claimed again is then three
// steps, not four (a stale claimant's mark after them is the bug that
// fencing exists for, and each step between is a chance that it marks
// first). The draw is whether the rescuer stays idle, so that it
// shrinks toward running: a story then needs no extra clock step for the
// rescue alone (rapid lowers a value, it never raises one, so a rescue on
// a step of its own could not move onto the step that ended the lease).
func (m *machine) AdvanceClock(t *rapid.T) {
	dt := drawAdvance(t, m.m)
	rescue := m.opts.Semantics.Rescue != nil && !rapid.Bool().Draw(t, "the rescuer stays idle")
	input := "+" + dt.String()
	if rescue {
		input += ", then the rescuer runs"
	}
	e := m.record("AdvanceClock", harness.Actor{Role: harness.Operator}, input)
	m.advance(t, dt)
	if rescue {
		m.rescueIn(t, e)
	}
}
