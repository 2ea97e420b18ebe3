package loopcheck

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
)

// nemesisKind is one kind of fault the loop contract's nemesis has, with
// what "struck" and "affected" count for it.
type nemesisKind struct{ kind, note string }

// nemesisKinds are every kind of fault the nemesis has (the schedule's
// step kinds that fault something, the network's per kind), in the order
// the coverage lists them.
var nemesisKinds = []nemesisKind{
	{string(faults.Blackhole), "a short partition; struck: a request reached it; affected: client chunks held"},
	{string(faults.Sever), "a long partition, a wedge's included; struck: a request reached it; affected: client chunks held"},
	{string(faults.Reset), "the connection reset at a request; affected: connections reset"},
	{string(faults.Latency), "every request delayed; affected: requests delayed"},
	{string(faults.LostReply), "a request reaches the server, its reply is lost; affected: replies lost"},
	{"kill", "a relay killed; struck: it was running"},
	{"stop", "a relay stopped gracefully; struck: it was running; affected: it did not return in time and was killed"},
	{"stop-mid-batch", "a relay stopped by its own stop (a Stopper's) while publishing the first of three payments committed together; struck: one was; affected: it did not return in time and was killed"},
	{"wedge", "a relay caught mid-publish, its link severed; affected: it held a transaction with row locks"},
	{"strand", "a relay caught mid-publish, its link severed for good, its publish never reaching the broker; affected: it held a transaction with row locks"},
	{"broker-link", "a network fault (its kind's row on the broker link counts what it did) on the wire to a real broker (JetStream), a payment committed into it; struck: it was put on"},
	{"window-outage", "a payment's first publish stored by a real broker (JetStream) with its ack lost, then every relay's link severed for longer than the dedupe window; struck: the publish was caught; affected: links severed"},
	{"crash-db", "the server SIGKILLed with every backend and restarted (crash recovery), under every actor's sessions; struck: it came back"},
	{"hold-tx", "a REPEATABLE READ transaction holding ACCESS SHARE on every table; struck: it was opened"},
	{"broker-down", "a broker outage; struck: it refused a publish; affected: publishes refused"},
	{"broker-slow", "a slow-broker window; struck: it acknowledged a publish late; affected: late acknowledgements"},
	{"ack-lost", "the next accepted publish loses its acknowledgement; struck: one did"},
	{"poison", "a payment's event refused by the broker; struck: it refused a publish; affected: publishes refused"},
	{"slow-payment", "a payment's event acknowledged late, for a time; struck: it acknowledged a publish late; affected: late acknowledgements"},
	{"freeze", "a relay frozen whole (SIGSTOP … SIGCONT) just before a publish reached the broker, around its lease; struck: one was frozen"},
	{"crash-loop", "a payment whose every publish crashes the relay publishing it; struck: a relay crashed on it; affected: crashes"},
	{"head-of-line", "a payment poisoned, then a probe committed behind it; struck: the probe was judged"},
	{"redeliver", "a message delivered again; struck: the broker had one"},
	{"crash-consumer", "the consumer crashed at a failpoint; struck: the failpoint was reached"},
	{"schema-change", "the outbox table changed shape (a column added) while the relays ran, as a migration does (a SchemaChanger's); struck: the change was made"},
	{"cold", "a schedule begun with every relay down, its first commit made before any relay ran (a shrinking shape, not drawn); struck: one began so"},
	{"timezone", "the sessions' TimeZone, away from UTC; struck: a schedule ran in it"},
}

// noRelay is where a wedge that caught no relay mid-publish counts.
const noRelay = "no relay publishing"

type faultKey struct{ kind, where string }

// injected counts a fault of kind put on at where; struck says it took
// effect, affecting affected requests, publishes or deliveries.
func (t *tally) injected(kind, where string, struck bool, affected int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.nemesis == nil {
		t.nemesis = map[faultKey]*harness.FaultCount{}
	}
	k := faultKey{kind, where}
	f := t.nemesis[k]
	if f == nil {
		f = &harness.FaultCount{Kind: kind, Where: where}
		t.nemesis[k] = f
	}
	f.Injected++
	if struck {
		f.Struck++
	}
	f.Affected += affected
}

// spells counts the faults a schedule cast on the broker.
func (t *tally) spells(ss []spell) {
	for _, s := range ss {
		where := "broker"
		if s.aim > 0 {
			where = "broker, at the " + s.aim.String() + " deadline"
		}
		t.injected(s.kind, where, s.hits > 0, s.hits)
	}
}

// coverage lists every kind of fault, per place, in nemesisKinds' order:
// the network's per link from net, the rest from the tally; a kind never
// drawn is one row of zeros. The caller holds t.mu.
func (t *tally) coverage(net map[string]faults.Coverage) []harness.FaultCount {
	var out []harness.FaultCount
	for _, nk := range nemesisKinds {
		var rows []harness.FaultCount
		for link, c := range net {
			if kc, ok := c[faults.Kind(nk.kind)]; ok {
				rows = append(rows, harness.FaultCount{Kind: nk.kind, Where: link, Injected: kc.Injected, Struck: kc.Struck, Affected: kc.Affected})
			}
		}
		for k, f := range t.nemesis {
			if k.kind == nk.kind {
				rows = append(rows, *f)
			}
		}
		if nk.kind == "timezone" {
			rows = t.everyZone(rows)
		}
		if len(rows) == 0 {
			rows = append(rows, harness.FaultCount{Kind: nk.kind})
		}
		slices.SortFunc(rows, func(a, b harness.FaultCount) int { return strings.Compare(a.Where, b.Where) })
		for _, r := range rows {
			r.Note = nk.note + t.extra(nk.kind)
			out = append(out, r)
		}
	}
	return out
}

// everyZone adds a row of zeros for each zone no schedule ran in.
func (t *tally) everyZone(rows []harness.FaultCount) []harness.FaultCount {
	for _, z := range zones[1:] { // UTC is no fault
		if !slices.ContainsFunc(rows, func(f harness.FaultCount) bool { return f.Where == z }) {
			rows = append(rows, harness.FaultCount{Kind: "timezone", Where: z})
		}
	}
	return rows
}

// extra is what the tally knows of kind beyond its counts.
func (t *tally) extra(kind string) string {
	switch {
	case kind == "kill" && (t.zombies > 0 || t.stuckRelays > 0):
		return fmt.Sprintf("; publishes after death %d (refused), never returned from Dispatch %d", t.zombies, t.stuckRelays)
	case kind == "broker-down" && t.downtime > 0:
		return fmt.Sprintf("; %v down in all", t.downtime.Round(time.Millisecond))
	}
	return ""
}
