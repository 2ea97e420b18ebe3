package loopcheck

import "github.com/outboxcheck/outboxcheck/properties"

// When each property's check runs: the reports' "checked" column.
const (
	afterEveryStep = "after every step and at the end"
	atTheEnd       = "at the end, after the drain"
	perProbe       = "per probe (a wedge step's)"
	perStrand      = "per strand step"
	perHeadOfLine  = "per head-of-line step"
	perCrashLoop   = "per crash-loop step"
	notByTheLoop   = "not by the loop contract"
)

// property is one property a loop run reports: when its check runs, what
// one judgement of it counts, and why it may never be judged. What it is
// (its kind, what it checks) is the catalogue's (package properties).
type property struct {
	name, checked, unit string
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
	{name: "no-phantom", checked: atTheEnd, unit: "end states", never: noEnd},
	{name: "fencing", checked: atTheEnd, unit: "completions that changed a row",
		never: "no relay reported a completion that changed its event's row"},
	{name: "lease-exclusive", checked: notByTheLoop},
	{name: "stable-id", checked: notByTheLoop},
	{name: "effect-at-most-once", checked: afterEveryStep, unit: "steps",
		never: "every read of the subject's effects after a step failed"},
	{name: "backoff", checked: atTheEnd, unit: "retries",
		never: "no retry came after a prompt refusal, within a lease of its payment's transaction, with no kill, stop, wedge, dispatcher partition or slow broker between"},
	{name: "retention-safe", checked: notByTheLoop},
	{name: "observability", checked: notByTheLoop},
	{name: "model-agreement", checked: notByTheLoop},
	{name: "no-loss", checked: atTheEnd, unit: "end states", never: noEnd},
	{name: "effect-exactly-once", checked: atTheEnd, unit: "end states", never: noEnd},
	{name: "timely-delivery", checked: atTheEnd, unit: "end states", never: noEnd},
	{name: "dead-letter", checked: atTheEnd, unit: "poisoned events",
		never: "no event refused on every publish (poisoned for ever) came due: none ended dead, none ran past MaxAttempts and its tolerance"},
	{name: "dead-exclusive", checked: atTheEnd, unit: "end states", never: noEnd},
	{name: "publish-at-most-once", checked: atTheEnd, unit: "events judged",
		never: "no event was published in a schedule without a killed, stopped, crashed or cut-off relay or a faulted dispatcher link, with no ack of it lost or given up on"},
	{name: "dedupe-window", checked: atTheEnd, unit: "events judged",
		never: "no event was sent to the real broker"},
	{name: "relay-isolation", checked: perProbe, unit: "probes"},
	{name: "head-of-line", checked: perHeadOfLine, unit: "probes",
		never: "no head-of-line step found a relay running on a healthy link and the broker up, prompt and refusing only its poison"},
	{name: "crash-loop", checked: perCrashLoop, unit: "crash loops",
		never: "no crash-loop step committed its payment while a relay ran on a healthy link"},
	{name: "takeover", checked: perStrand, unit: "strands",
		never: "no strand step caught a relay mid-publish while another relay ran on a healthy link and the broker was up, prompt and not refusing its event"},
	{name: "relay-liveness", checked: afterEveryStep, unit: "steps", never: noRun},
}

// kindOf is name's kind in the property catalogue.
func kindOf(name string) string {
	p, _ := properties.Lookup(name)
	return string(p.Kind)
}
