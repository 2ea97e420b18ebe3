package model

// Stable property names (docs/properties.md), used in problems and reports.
const (
	NoPhantom         = "no-phantom"
	Fencing           = "fencing"
	LeaseExclusive    = "lease-exclusive"
	StableID          = "stable-id"
	EffectAtMostOnce  = "effect-at-most-once"
	Backoff           = "backoff"
	ModelAgreement    = "model-agreement"
	Observability     = "observability"
	RetentionSafe     = "retention-safe"
	NoLoss            = "no-loss"
	EffectExactlyOnce = "effect-exactly-once"
)

// Safety lists the properties checked after every action, most specific
// first: when one wrong result breaks several, the first one names it.
var SafetyProperties = []string{NoPhantom, Fencing, LeaseExclusive, StableID, EffectAtMostOnce,
	Backoff, RetentionSafe, Observability, ModelAgreement}

// Liveness lists the properties checked after the drain.
var LivenessProperties = []string{NoLoss, EffectExactlyOnce}

// Problem is one way an observed result disagrees with the model.
type Problem struct {
	Property string
	Event    string // the event_id concerned, "" when none
	Detail   string
}

func (p Problem) String() string {
	if p.Event == "" {
		return "[" + p.Property + "] " + p.Detail
	}
	return "[" + p.Property + "] event " + p.Event + ": " + p.Detail
}

// First returns the problem whose property comes first in Safety then
// Liveness order, or false when there is none.
func First(ps []Problem) (Problem, bool) {
	order := append(append([]string{}, SafetyProperties...), LivenessProperties...)
	for _, name := range order {
		for _, p := range ps {
			if p.Property == name {
				return p, true
			}
		}
	}
	if len(ps) > 0 {
		return ps[0], true
	}
	return Problem{}, false
}
