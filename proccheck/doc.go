// Package proccheck is the process contract (docs/process-subjects.md): a subject
// in any language, run as child processes that speak JSON lines on stdin
// and stdout, checked through the loop contract's judge, nemesis,
// shrinker and reports.
//
// The subject is one command; the harness starts it once per actor with
// the role as its last argument (producer, relay, consumer, operator),
// directly, not through a shell. Each process gets its own link to the
// database in OUTBOXCHECK_DATABASE_URL (through the fault proxy, except
// the operator's) and the short real-time settings it must map onto its
// knobs (OUTBOXCHECK_LEASE_MS and the rest: Env). Its first line is a
// hello that names the protocol version; after that:
//
//   - harness → producer: produce payments in one business transaction,
//     then commit or roll it back; the reply is ok or an error (an error
//     of a commit leaves the payments maybe-committed);
//   - relay → harness: publish a message and wait for the broker's reply
//     (accepted, refused, or an error that may hide an arrival), so the
//     broker stays the harness's own with every per-event fault it has;
//     or abandon a publish it no longer waits for;
//   - harness → consumer: handle a message; with failpoints, the consumer
//     announces each named point and waits to go on, and the harness may
//     kill it there (SIGKILL);
//   - harness → operator: reset, effects, and, if its hello lists them,
//     pending and dead letters.
//
// Kill is SIGKILL of the actor's process group (the link also refuses
// until restart, as for any loop subject); a stop is SIGTERM, then
// SIGKILL after the loop contract's grace; a freeze is SIGSTOP, for a
// drawn time around the lease, then SIGCONT (loopcheck.Pauser). Anything that is not the
// protocol (bad JSON, an unknown message, a reply to nothing, a process
// that exits at start) is the subject's error, with the offending line
// quoted; stderr is the subject's log, its last lines quoted in errors.
package proccheck
