package faults_test

import (
	"slices"
	"testing"

	"github.com/outboxcheck/outboxcheck/faults"
)

// The step contract draws from All: its seeds replay only while All stays
// as it is. Sever is the loop contract's alone.
func TestAllIsUnchangedAndLoopHasEveryKind(t *testing.T) {
	if want := []faults.Kind{faults.Blackhole, faults.Reset, faults.Latency, faults.LostReply}; !slices.Equal(faults.All, want) {
		t.Fatalf("All = %v, want %v", faults.All, want)
	}
	if want := []faults.Kind{faults.Blackhole, faults.Sever, faults.Reset, faults.Latency, faults.LostReply}; !slices.Equal(faults.Loop, want) {
		t.Fatalf("Loop = %v, want %v", faults.Loop, want)
	}
}

// A Sever injected that never struck is reported idle like any kind.
func TestIdleCountsSever(t *testing.T) {
	c := faults.Coverage{faults.Sever: {Injected: 1}, faults.Reset: {Injected: 1, Struck: 1}}
	if got := c.Idle(); !slices.Equal(got, []faults.Kind{faults.Sever}) {
		t.Fatalf("Idle = %v, want [sever]", got)
	}
}
