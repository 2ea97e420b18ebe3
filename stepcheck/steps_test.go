package stepcheck

import (
	"testing"

	"pgregory.net/rapid"
)

// A step whose action does not apply draws another one; any other panic
// (a failure) goes through.
func TestApplySkips(t *testing.T) {
	if apply(nil, func(*rapid.T) { skip("no such claim held") }) {
		t.Fatal("a skipped action counted as applied")
	}
	if !apply(nil, func(*rapid.T) {}) {
		t.Fatal("an action that ran counted as skipped")
	}
	defer func() {
		if r := recover(); r != "boom" {
			t.Fatalf("recovered %v, want the action's own panic", r)
		}
	}()
	apply(nil, func(*rapid.T) { panic("boom") })
}
