package loopcheck

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
)

// tally counts, over a run, what the nemesis did beyond the network.
type tally struct {
	mu                                 sync.Mutex
	kills                              int
	stops                              int // graceful stops that returned
	holds                              int // held-open transactions
	wedges                             int // relays cut off mid-publish
	probes                             int // relay-isolation probes judged
	outages                            int
	downtime                           time.Duration
	zombies                            int            // publishes attempted by a killed incarnation
	stuckRelays                        int            // killed incarnations whose Dispatch never returned
	partitions                         map[string]int // "link kind" → faults put on that link
	refused                            int            // publishes the broker refused (down, or a poison's)
	ackLost                            int            // publishes accepted whose ack was lost (the harness's, or the wire's)
	duplicates                         int            // publishes the broker accepted of an event it had
	storedTwice                        int            // messages a real broker's stream holds of an event it held
	retained                           retained       // the most WAL a replication slot held back at a step
	dbCrashes                          int            // server crashes that came back
	quits                              int            // incarnations whose Dispatch returned unasked
	consumerScheduled, consumerReached int
	wedgeSteps                         int            // wedge steps, whether or not they caught a relay
	judged                             map[string]int // property → its judgements (judged.fold)
	unprobedWhy                        map[string]int // why a wedge's probe was not judged → how often
	endsRead                           int            // schedules whose end state was read
	nemesis                            map[faultKey]*harness.FaultCount
}

func (t *tally) partition(link string, k faults.Kind) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.partitions == nil {
		t.partitions = map[string]int{}
	}
	t.partitions[link+" "+string(k)]++
}

// attempts counts one schedule's refused publishes, those whose ack was
// lost, and its duplicate ones (an event the broker already had).
func (t *tally) attempts(as []Attempt) {
	t.mu.Lock()
	defer t.mu.Unlock()
	carried := map[string]bool{}
	for _, a := range as {
		switch a.Outcome {
		case "down", "poison":
			t.refused++
		case "accepted", "accepted-late", "ack-lost", "no-reply":
			if a.Outcome == "ack-lost" || a.Outcome == "no-reply" {
				t.ackLost++
			}
			if carried[a.EventID] {
				t.duplicates++
			}
			carried[a.EventID] = true
		}
	}
}

// consumerCrash counts a consumer crash scheduled, or its failpoint
// reached.
func (t *tally) consumerCrash(reached bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if reached {
		t.consumerReached++
	} else {
		t.consumerScheduled++
	}
}

func (t *tally) quit() { t.mu.Lock(); t.quits++; t.mu.Unlock() }

func (t *tally) kill()  { t.mu.Lock(); t.kills++; t.mu.Unlock() }
func (t *tally) stop()  { t.mu.Lock(); t.stops++; t.mu.Unlock() }
func (t *tally) hold()  { t.mu.Lock(); t.holds++; t.mu.Unlock() }
func (t *tally) wedge() { t.mu.Lock(); t.wedges++; t.mu.Unlock() }

func (t *tally) wedgeStep() { t.mu.Lock(); t.wedgeSteps++; t.mu.Unlock() }
func (t *tally) probe()     { t.mu.Lock(); t.probes++; t.mu.Unlock() }
func (t *tally) zombie()    { t.mu.Lock(); t.zombies++; t.mu.Unlock() }
func (t *tally) stuck()     { t.mu.Lock(); t.stuckRelays++; t.mu.Unlock() }

func (t *tally) outage(d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if d > 0 {
		t.outages++
		t.downtime += d
	}
}

// loopOnly are the step contract's properties and faults the loop
// contract cannot see, with why.
var loopOnly = map[string]string{
	"lease-exclusive": "the loop contract sees the end state and effects only, not rows or claims",
	"stable-id":       "the loop contract sees the end state and effects only, not rows or claims",
	"model-agreement": "the loop contract has no model of the subject's rows",
	"observability":   "the loop contract reads no Stats",
	"retention-safe":  "the loop contract runs no cleanup",
}

// summarize fills sum with the run's coverage and what did not apply.
func (r *runner) summarize(sum *harness.Summary) {
	sum.Network = r.network()
	r.tally.mu.Lock()
	defer r.tally.mu.Unlock()
	sum.Crashes.Dispatcher, sum.Crashes.Database = r.tally.kills, r.tally.dbCrashes
	sum.Broker.Refused, sum.Broker.AckLost = r.tally.refused, r.tally.ackLost
	sum.Broker.Duplicates, sum.Broker.StoredTwice = r.tally.duplicates, r.tally.storedTwice
	sum.Slots = harness.SlotCoverage{MaxRetained: r.tally.retained.bytes, Slot: r.tally.retained.slot}
	sum.Crashes.ConsumerScheduled, sum.Crashes.ConsumerReached = r.tally.consumerScheduled, r.tally.consumerReached
	sum.NotApplicable = map[string]string{}
	for k, v := range loopOnly {
		sum.NotApplicable[k] = v
	}
	if _, ok := capability[DeadLetterer](r.subj); !ok {
		sum.NotApplicable["dead letters"] = fmt.Sprintf("the subject reports no dead letters: broker downtime was kept within the retry budget (%v) per schedule", r.opts.RetryBudget)
	}
	if _, ok := capability[Failpointer](r.subj); !ok {
		sum.NotApplicable["consumer crashes"] = "the subject's consumer has no failpoints (Failpointer): crash steps are skipped"
	}
	if _, ok := capability[Backoffer](r.subj); !ok {
		sum.NotApplicable["backoff"] = "the subject declares no backoff (Backoffer): retries are not timed"
	}
	if _, ok := capability[Isolated](r.subj); !ok || r.opts.Dispatchers < 2 {
		sum.NotApplicable["relay-isolation"] = "the subject declares no relay isolation (Isolated), or runs one relay: wedges are not probed"
	}
	if tk, ok := capability[Takeover](r.subj); !ok || tk.TakeoverBound() <= 0 || r.opts.Dispatchers < 2 {
		sum.NotApplicable["takeover"] = "the subject declares no takeover (Takeover), or runs one relay: strands are not judged"
	}
	if _, shows := capability[DeadLetterer](r.subj); !shows {
		sum.NotApplicable["crash-loop"] = "the subject shows no dead letters: an event that crashes its relay cannot be seen to end dead"
	} else if cl, ok := capability[CrashLooper](r.subj); ok && cl.CrashLoopBound() <= 0 {
		sum.NotApplicable["crash-loop"] = "the subject declares that it retries an event that crashes its relay for ever (CrashLooper)"
	}
	if op, ok := capability[OncePublisher](r.subj); !ok || !op.PublishesOnce() {
		sum.NotApplicable["publish-at-most-once"] = "the subject does not declare that it publishes each event once (OncePublisher): duplicate publishes are only counted"
	}
	switch {
	case r.js == nil:
		sum.NotApplicable["dedupe-window"] = "the broker is the harness's in-memory one, which deduplicates nothing (--jetstream for a real one)"
	case !r.leansOnDedupe():
		sum.NotApplicable["dedupe-window"] = "the subject does not declare that it leans on the broker's deduplication (Deduper): messages stored twice are only counted"
	}
	if cr, ok := capability[ClaimReporter](r.subj); !ok || !cr.ReportsClaims() {
		sum.NotApplicable["fencing"] = "the subject's relays report no claims (ClaimReporter; a process subject's capability \"claims\"): the loop contract sees the end state and effects only, not rows or claims"
	}
	if _, ok := capability[Pender](r.subj); !ok {
		sum.NotApplicable["timely-delivery"] = "the subject lists no pending events: an event not delivered by the bound counts as lost"
	}
	na := maps.Clone(sum.NotApplicable)
	na["dead-letter"], na["dead-exclusive"] = na["dead letters"], na["dead letters"]
	sum.Properties = r.tally.records(na)
	sum.Nemesis = r.tally.coverage(r.linkCoverage())
	if _, ok := capability[Pauser](r.subj); !ok {
		sum.Nemesis = slices.DeleteFunc(sum.Nemesis, func(f harness.FaultCount) bool { return f.Kind == "freeze" })
		sum.NotApplicable["freeze"] = "the subject's relays cannot be frozen (Pauser: a subject in processes, proccheck): freezes are not drawn"
	}
	if _, ok := capability[SchemaChanger](r.subj); !ok {
		sum.Nemesis = slices.DeleteFunc(sum.Nemesis, func(f harness.FaultCount) bool { return f.Kind == "schema-change" })
		sum.NotApplicable["schema-change"] = "the subject's outbox table does not change shape (SchemaChanger): schema changes are not drawn"
	}
	if r.opts.CrashDatabase == nil {
		sum.Nemesis = slices.DeleteFunc(sum.Nemesis, func(f harness.FaultCount) bool { return f.Kind == "crash-db" })
		sum.NotApplicable["crash-db"] = "the harness crashes the server only when asked, on a server it owns (Options.CrashDatabase, --crash-db), one schedule at a time"
	}
	if r.js == nil {
		sum.Nemesis = slices.DeleteFunc(sum.Nemesis, func(f harness.FaultCount) bool { return f.Kind == "broker-link" || f.Kind == "window-outage" })
		sum.NotApplicable["broker-link"] = "the broker is the harness's in-memory one (Options.JetStream, --jetstream, for a real one): no wire to fault"
		sum.NotApplicable["window-outage"] = "the broker is the harness's in-memory one (Options.JetStream, --jetstream, for a real one): no dedupe window to outlast"
	}
	if _, ok := capability[Stopper](r.subj); !ok {
		sum.Nemesis = slices.DeleteFunc(sum.Nemesis, func(f harness.FaultCount) bool { return f.Kind == "stop-mid-batch" })
		sum.NotApplicable["stop-mid-batch"] = "the subject's relays have no stop of their own (Stopper): a stop is a context cancel, and stops mid-batch are not drawn"
	}
	if !slices.ContainsFunc(sum.Nemesis, func(f harness.FaultCount) bool { return f.Kind == "cold" && f.Injected > 0 }) {
		// a shrinking shape, never drawn: no row unless one ran
		sum.Nemesis = slices.DeleteFunc(sum.Nemesis, func(f harness.FaultCount) bool { return f.Kind == "cold" })
	}
	for kind, why := range map[string]string{"crash-consumer": sum.NotApplicable["consumer crashes"], "crash-loop": sum.NotApplicable["crash-loop"]} {
		for i, f := range sum.Nemesis {
			if f.Kind == kind && why != "" {
				sum.Nemesis[i].Note = "not applicable: " + why
			}
		}
	}
}

// checkpoint records the end of the generated schedule just run, of steps
// steps, elapsed after the run's start, with the run's fault counts so
// far, in sum.Progress.
func (r *runner) checkpoint(sum *harness.Summary, steps int, elapsed time.Duration) {
	var now harness.Summary
	r.summarize(&now)
	injected, struck := now.Faults()
	sum.Progress = append(sum.Progress, harness.Checkpoint{Check: sum.Checks, Elapsed: elapsed,
		Steps: steps, Faults: injected, Struck: struck})
}

// Loop is what the loop nemesis did over a run, beyond the network.
type Loop struct {
	Kills    int           // dispatcher incarnations killed
	Outages  int           // broker outages that added downtime
	Downtime time.Duration // broker downtime in all
	Zombies  int           // publishes attempted by killed incarnations (all refused)
	Stuck    int           // killed incarnations whose Dispatch never returned
	Quits    int           // incarnations whose Dispatch returned before any kill
	Stops    int           // graceful stops that returned
	Holds    int           // held-open transactions
	Wedges   int           // relays cut off mid-publish
	Probes   int           // relay-isolation probes judged
	// Partitions counts the faults put on each link, by "link kind".
	Partitions map[string]int
}

func (r *runner) loop() Loop {
	r.tally.mu.Lock()
	defer r.tally.mu.Unlock()
	return Loop{Kills: r.tally.kills, Outages: r.tally.outages, Zombies: r.tally.zombies, Stuck: r.tally.stuckRelays, Quits: r.tally.quits, Downtime: r.tally.downtime,
		Stops: r.tally.stops, Holds: r.tally.holds, Wedges: r.tally.wedges, Probes: r.tally.probes,
		Partitions: maps.Clone(r.tally.partitions)}
}
