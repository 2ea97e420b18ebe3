package harness

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// CallCount is how one of the subject's operations fared in a run: a
// kind of call that was made and never succeeded is called out, as a
// fault injected but never struck is, so that a run cannot pass quietly
// while an operation never worked (a redrive that always times out, say;
// one that always fails with an error of its own is a subject error).
type CallCount struct {
	Calls, OK int
	// Failed counts the failures the harness did not cause on purpose,
	// and FirstError is the first of them.
	Failed     int
	FirstError string
}

// NeverSucceeded lists the operations that were called, failed (not on
// the harness's purpose) and never once succeeded, with their count and
// first error.
func (s Summary) NeverSucceeded() map[string]string {
	out := map[string]string{}
	for op, c := range s.Calls {
		if c.OK == 0 && c.Failed > 0 {
			out[op] = fmt.Sprintf("%d calls, none succeeded; the first failed with: %s", c.Calls, c.FirstError)
		}
	}
	return out
}

// NeverSucceededText lists never (NeverSucceeded) in one line.
func NeverSucceededText(never map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(never)) {
		parts = append(parts, k+" ("+never[k]+")")
	}
	return strings.Join(parts, ", ")
}
