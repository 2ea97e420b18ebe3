// Package properties is the property catalogue: every named property of
// outboxcheck, whether it is safety or liveness, what it checks, and on
// what record. The contracts judge with these names (stepcheck with the
// model's problems, loopcheck on its end state and its broker's record);
// the catalogue belongs to neither. A new property is one entry here, and
// its check in the contract that can judge it.
package properties

import "github.com/outboxcheck/outboxcheck/model"

// Kind is safety (nothing bad ever happens: judged as it happens) or
// liveness (something good eventually happens: judged at an end).
type Kind string

const (
	Safety   Kind = "safety"
	Liveness Kind = "liveness"
)

// Property is one named property.
type Property struct {
	Name   string
	Kind   Kind
	Checks string // what holds when it holds
	Record string // what it is judged on
}

// Loop-contract property names (the step contract's are model's).
const (
	TimelyDelivery = "timely-delivery"
	DeadLetter     = "dead-letter"
	DeadExclusive  = "dead-exclusive"
	RelayLiveness  = "relay-liveness"
	RelayIsolation = "relay-isolation"
	Takeover       = "takeover"
	HeadOfLine     = "head-of-line"
	CrashLoop      = "crash-loop"
	PublishOnce    = "publish-at-most-once"
	DedupeWindow   = "dedupe-window"
)

// Catalogue is every property, in the order reports list them: the step
// contract's safety properties most specific first (model.SafetyProperties),
// then liveness, then the loop contract's own.
var Catalogue = []Property{
	{model.NoPhantom, Safety, "nothing is claimed, published or takes effect that no committed transaction wrote", "claims, the broker's record, effects"},
	{model.Fencing, Safety, "a mark with a stale claim_id changes nothing; a PUBLISHED row never reverts", "marks and rows read back"},
	{model.LeaseExclusive, Safety, "a row is not claimed while another claim holds it, and a rescue revokes no live claim", "claims and rows read back"},
	{model.StableID, Safety, "an event keeps its event_id and payload through retries, redrives and publishes", "claims and the broker's record"},
	{model.EffectAtMostOnce, Safety, "no event takes effect more than once", "the consumer's effects"},
	{model.Backoff, Safety, "attempts are counted, a row is not retried before its available_at, and it is DEAD after the attempts allowed", "rows read back; in the loop contract, the broker's record of publish attempts"},
	{model.RetentionSafe, Safety, "cleanup deletes only PUBLISHED rows past retention", "rows read back"},
	{model.Observability, Safety, "what an operator sees (Stats) agrees with the model", "Stats"},
	{model.ModelAgreement, Safety, "every other result agrees with the model's", "every call's result"},
	{model.NoLoss, Liveness, "every committed event is delivered, dead or (loop contract) pending; none is lost", "the end state: rows, broker, effects"},
	{model.EffectExactlyOnce, Liveness, "every acknowledged event took effect exactly once", "the end state's effects"},
	{TimelyDelivery, Liveness, "no committed payment is still pending at the delivery bound", "the end state and Pending"},
	{DeadLetter, Liveness, "an event refused on every publish is dead within MaxAttempts attempts (and the tolerance)", "the broker's record and DeadLetters"},
	{DeadExclusive, Safety, "no payment is dead twice, nor both dead and delivered", "DeadLetters and effects"},
	{RelayLiveness, Liveness, "no relay's Dispatch returns while the harness neither stopped nor killed it", "the relays' lifetimes"},
	{RelayIsolation, Liveness, "another relay publishes a new event while one is cut off holding what it holds", "probes during wedge steps"},
	{PublishOnce, Safety, "where the subject declares it, no event is accepted by the broker twice unless a publish of it was ambiguous or a relay was killed, stopped or cut off", "the broker's record of every publish"},
	{CrashLoop, Liveness, "an event whose every publish crashes the relay publishing it ends dead within the bound (MaxAttempts × (Lease + Recovery), or the subject's declared one)", "the subject's dead letters during crash-loop steps"},
	{HeadOfLine, Liveness, "while one event is refused on every publish, an event committed after it is published within the bound (GiveUp and Recovery)", "the broker's record during head-of-line steps"},
	{DedupeWindow, Safety, "where the subject leans on a real broker's deduplication, no event is stored twice by a resend later than the dedupe window allows: what the window gives, and where it stops", "the real broker's stream and its record of every publish"},
	{Takeover, Liveness, "another relay publishes the event a relay was cut off for good in the middle of publishing, within the declared bound", "the broker's record during strand steps"},
}

// Lookup returns the property named name.
func Lookup(name string) (Property, bool) {
	for _, p := range Catalogue {
		if p.Name == name {
			return p, true
		}
	}
	return Property{}, false
}
