package faults

import (
	"fmt"
	"maps"
	"sort"
	"strings"
)

// KindCoverage counts one fault kind over a run.
type KindCoverage struct {
	Injected int // faults of this kind put on a link
	Struck   int // of those, how many armed (a request reached the arming point)
	Affected int // client chunks held or delayed, replies lost, connections cut
}

// Coverage is per kind. A kind injected but never struck is a fault that
// affected nothing: a green run must say so, not hide it.
type Coverage map[Kind]KindCoverage

func (c Coverage) add(k Kind, armed bool, affected int) {
	kc := c[k]
	kc.Injected++
	if armed {
		kc.Struck++
	}
	kc.Affected += affected
	c[k] = kc
}

func (c Coverage) clone() Coverage { return maps.Clone(c) }

// Merge adds o's counts to c.
func (c Coverage) Merge(o Coverage) {
	for k, v := range o {
		kc := c[k]
		kc.Injected += v.Injected
		kc.Struck += v.Struck
		kc.Affected += v.Affected
		c[k] = kc
	}
}

// Idle lists the kinds that were injected and never struck, in the order
// of Loop (every kind).
func (c Coverage) Idle() []Kind {
	var out []Kind
	for _, k := range Loop {
		if v, ok := c[k]; ok && v.Injected > 0 && v.Struck == 0 {
			out = append(out, k)
		}
	}
	return out
}

func (c Coverage) String() string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		v := c[Kind(k)]
		fmt.Fprintf(&b, "%s: injected %d, struck %d, affected %d; ", k, v.Injected, v.Struck, v.Affected)
	}
	return strings.TrimSuffix(b.String(), "; ")
}
