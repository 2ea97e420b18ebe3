package stepcheck

import (
	"context"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/model"
)

// machine is one check: a subject, the model it must agree with, the
// broker, the dispatchers' memories and the history.
type machine struct {
	ctx     context.Context
	opts    Options
	subj    Subject
	m       model.State
	broker  *Broker
	held    [][]held
	crashed []bool
	hist    *harness.History
	pays    int

	lastCommit time.Time // harness time of the last producer commit
	dbCrashed  bool      // CrashDatabase ran in this check

	afterCleanup bool
	published    string // the claim whose Publish ran last, until the next observation
	brokerSeen   int    // broker messages already put on a history entry (flushBroker)

	swarm   swarm      // the kinds this check may use (DrawSwarm)
	prior   *priorRead // the last read-back (readback.go)
	called  bool       // a subject call ran since the last read-back
	links   *links
	fresh   map[harness.Actor]bool // actors whose session was cut in this check (fresh.go)
	unheard map[harness.Actor]bool // actors whose link a settle cut since their subject last heard of a crash
	harness *ownSession
	sum     *harness.Summary
	run     *runner

	holdErr  error                            // ending a lock-holder's sessions failed (lockheld.go)
	early    string                           // the fault that ended the last call early, or ""
	draining bool                             // the drain is running: its calls get a plumbing deadline (callTimeout)
	drainTry int                              // which try of a drain call this is, from 0
	logf     func(format string, args ...any) // the check's log (see steps)
}

func newMachine(r *runner) *machine {
	return &machine{ctx: r.ctx, opts: r.opts, subj: r.subj, m: model.New(r.opts.Start, r.opts.Semantics),
		broker: &Broker{}, held: make([][]held, r.opts.Dispatchers),
		crashed: make([]bool, r.opts.Dispatchers), hist: &harness.History{},
		links: r.links, fresh: map[harness.Actor]bool{}, unheard: map[harness.Actor]bool{}, harness: r.harness, sum: &r.sum, run: r}
}
