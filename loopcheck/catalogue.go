package loopcheck

// When each property's check runs: the reports' "checked" column.
const (
	afterEveryStep = "after every step and at the end"
	atTheEnd       = "at the end, after the drain"
	perProbe       = "per probe (a wedge step's)"
	notByTheLoop   = "not by the loop contract"
)

// property is one property a loop run reports: its kind, when its check
// runs, what one judgement of it counts, and why it may never be judged.
type property struct {
	name, kind, checked, unit string
	// never says why an applicable property was judged zero times.
	never string
}

const (
	noEnd = "no schedule reached its end state (the run stopped before any drain)"
	noRun = "no schedule ran a step"
)

// catalogue lists the properties a loop run reports, in the step
// contract's order (its properties the loop cannot see are in loopOnly),
// then the loop contract's own.
var catalogue = []property{
	{name: "no-phantom", kind: "safety", checked: atTheEnd, unit: "end states", never: noEnd},
	{name: "fencing", kind: "safety", checked: notByTheLoop},
	{name: "lease-exclusive", kind: "safety", checked: notByTheLoop},
	{name: "stable-id", kind: "safety", checked: notByTheLoop},
	{name: "effect-at-most-once", kind: "safety", checked: afterEveryStep, unit: "steps",
		never: "every read of the subject's effects after a step failed"},
	{name: "backoff", kind: "safety", checked: atTheEnd, unit: "retries",
		never: "no retry came after a prompt refusal, within a lease of its payment's transaction, with no kill, stop, wedge, dispatcher partition or slow broker between"},
	{name: "retention-safe", kind: "safety", checked: notByTheLoop},
	{name: "observability", kind: "safety", checked: notByTheLoop},
	{name: "model-agreement", kind: "safety", checked: notByTheLoop},
	{name: "no-loss", kind: "liveness", checked: atTheEnd, unit: "end states", never: noEnd},
	{name: "effect-exactly-once", kind: "liveness", checked: atTheEnd, unit: "end states", never: noEnd},
	{name: "timely-delivery", kind: "liveness", checked: atTheEnd, unit: "end states", never: noEnd},
	{name: "dead-letter", kind: "liveness", checked: atTheEnd, unit: "poisoned events",
		never: "no event refused on every publish (poisoned for ever) came due: none ended dead, none ran past MaxAttempts and its tolerance"},
	{name: "dead-exclusive", kind: "safety", checked: atTheEnd, unit: "end states", never: noEnd},
	{name: "relay-isolation", kind: "liveness", checked: perProbe, unit: "probes"},
	{name: "relay-liveness", kind: "liveness", checked: afterEveryStep, unit: "steps", never: noRun},
}
