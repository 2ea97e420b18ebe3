package loopcheck

import (
	"context"
	"errors"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// Options tune a run. Zero fields take the defaults given.
type Options struct {
	DatabaseURL string `json:"-"`           // a database the tool created (see stepcheck.Options)
	Dispatchers int    `json:"dispatchers"` // default 2
	// Lease, BackoffBase and MaxAttempts are given to the subject in Env.
	// Defaults 300 ms, 20 ms, 5: the seed's 20 attempts are one option
	// away; 5 lets a poison event reach its dead letter within a second
	// or two of real time, so that schedules stay short.
	Lease       time.Duration `json:"lease"`
	BackoffBase time.Duration `json:"backoff_base"`
	MaxAttempts int           `json:"max_attempts"`
	// RetryBudget: see Env.RetryBudget. Default 500 ms, within what the
	// default policy's retries take (2+4+8+16 backoff units of 20 ms).
	RetryBudget time.Duration `json:"retry_budget"`
	// Recovery is the subject's own declaration: the longest it may go,
	// once every fault is healed and every relay restarted, without
	// progress (a publish, an effect, a dead letter, a pending event
	// fewer) while events are still outstanding. Its slowest internal
	// cadence (rescan, rescuer, poll) plus one lease. Default 3 s.
	//
	// After healing, the harness waits while the subject makes progress,
	// and stops after Recovery without any, or at the hard bound
	// (HardBound), whichever comes first.
	Recovery time.Duration `json:"recovery"`
	// GiveUp is the longest the subject takes, from an event's first
	// failed publish, to give up on it (dead) when every publish fails:
	// its retries up to MaxAttempts with its backoff. Default
	// MaxAttempts × 16 × BackoffBase.
	GiveUp time.Duration `json:"give_up"`
	// CallTimeout bounds each harness call. Default 2 s.
	CallTimeout time.Duration `json:"call_timeout"`
	// JetStream makes the broker a real one: an embedded NATS JetStream
	// server per runner (brokers/jetstream) behind its own link, which
	// broker-link steps partition. The harness's own broker faults
	// (outages, poison, slow and lost acks) still decide before a publish
	// goes on the wire; what the stream holds is what the consumer gets
	// and the judge reads. DedupeWindow is its stream's Nats-Msg-Id
	// window (default 2 s).
	JetStream    bool          `json:"jetstream,omitempty"`
	DedupeWindow time.Duration `json:"dedupe_window,omitempty"`
	// CrashDatabase, if set, SIGKILLs the server DatabaseURL is on and
	// brings it back once it has recovered (pgscratch.Server.Crash: a
	// server the harness owns): schedules then draw crash-db steps. A
	// crash reaches every database on the server, so schedules run one
	// at a time (Parallel 1), the only ones on it.
	CrashDatabase func(context.Context) error `json:"-"`
	// Steps is the average length of a schedule. Default 12, at most 200.
	Steps int `json:"steps"`
	// Tries is how many times a shrink candidate runs, until it fails
	// with the property: it counts as failing if one run does. Default 2.
	Tries int `json:"-"`
	// Parallel is how many schedules run at once, each on its own
	// database (made on the same server), links, broker and subject
	// instance; shrink candidates and confirmations too. Default 1. The
	// runners share the server, and what one schedule does to the server
	// as a whole reaches the others: a transaction it holds open holds
	// back the snapshot horizon every database sees, and it takes CPU. A
	// subject that reads the server-wide snapshot (pg_current_snapshot,
	// pg_snapshot_xmin: a forwarder that orders by transaction id) would
	// then stall for reasons its own story does not show, so it must run
	// one at a time; one that does not (the harness's own relays) may
	// take DefaultParallel(). A server that will not make the extra
	// databases leaves fewer (Result.ParallelNote says why).
	Parallel int `json:"-"`
	// Confirm is how many times the shrunk schedule runs again, to say
	// how often it reproduces (Result.Reproduced). Default 5.
	Confirm int `json:"-"`
	// Deadline, if set, is when the run stops starting schedules: those
	// running finish, a failure is shrunk and confirmed as usual, and
	// Summary.OutOfTime says the budget ended the run.
	Deadline time.Time `json:"-"`
	// Interrupt, when closed, stops the run: the schedule in progress is
	// abandoned unjudged, no schedule starts after it, and a failure found
	// before it is kept as shrunk so far (not confirmed again). Run then
	// returns with Summary.Interrupted set.
	Interrupt <-chan struct{} `json:"-"`
	// OnCheck, if set, receives each schedule's story when it ends (its
	// Shrinking set for a shrink run), one call at a time: a progress
	// line, or a rate plot.
	OnCheck func(*harness.History) `json:"-"`
}

// interrupted reports whether o.Interrupt is closed.
func (o Options) interrupted() bool {
	select {
	case <-o.Interrupt:
		return true
	default:
		return false
	}
}

// errInterrupted ends a schedule that Options.Interrupt cut short.
var errInterrupted = errors.New("loopcheck: interrupted")

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	for _, n := range []struct {
		v   *int
		def int
	}{{&o.Dispatchers, 2}, {&o.MaxAttempts, 5}, {&o.Steps, 12}, {&o.Tries, 2}, {&o.Parallel, 1}, {&o.Confirm, 5}} {
		if *n.v == 0 {
			*n.v = n.def
		}
	}
	o.Steps = min(o.Steps, 200)
	def(&o.Lease, defaultLease)
	def(&o.BackoffBase, 20*time.Millisecond)
	def(&o.RetryBudget, 500*time.Millisecond)
	def(&o.Recovery, 3*time.Second)
	def(&o.CallTimeout, 2*time.Second)
	if o.JetStream {
		def(&o.DedupeWindow, 2*time.Second)
	}
	def(&o.GiveUp, time.Duration(o.MaxAttempts)*16*o.BackoffBase)
	if o.CrashDatabase != nil {
		o.Parallel = 1 // a crash reaches every database on the server
	}
	return o
}

// HardBound is the longest the harness waits after healing, progress or
// not: four recovery times, two leases, and the time to give up on an
// event, and the latest the harness's slow broker acknowledges (2.5 s).
func (o Options) HardBound() time.Duration {
	o = o.withDefaults()
	return 4*o.Recovery + 2*o.Lease + o.GiveUp + maxSlowDelay
}

// maxOutage is the longest broker outage one step draws.
const maxOutage = 3 * time.Second

// defaultLease is Options.Lease unless set: short, so that leases run out
// within a schedule.
const defaultLease = 300 * time.Millisecond
