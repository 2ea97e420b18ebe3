package mutants

import "github.com/outboxcheck/outboxcheck/impl"

// DualWritePublishThenCommit copies a "fast path": the producer publishes
// straight away for latency and keeps the outbox row as a backup. When its
// transaction then rolls back (a constraint, a timeout, a crash), the
// broker has already told the world about a payment that never happened.
var DualWritePublishThenCommit = Mutant{
	Name:  "dual-write-publish-then-commit",
	Bug:   "publishes from the request path before the transaction commits: a rollback leaves a phantom event",
	Kills: "no-phantom",
	Producer: func(p *impl.Producer, broker impl.Publisher) Writer {
		return dualWriter{p: p, broker: broker, publishFirst: true, keepOutboxRow: true}
	},
}
