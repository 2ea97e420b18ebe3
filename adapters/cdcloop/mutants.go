package cdcloop

import (
	"context"

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// Mutants are the CDC relay's known-bad variants, one bug each, from the
// ways real write-ahead-log readers lost events. A new one is an Options
// field (or function) and one line here.
var Mutants = []refloop.Mutant{
	{Name: "cdc-from-current", Bug: "starts streaming at the server's current WAL position, not the slot's confirmed one: what committed while the relay was down is skipped", Kills: "no-loss", New: variant(Options{FromCurrent: true})},
	{Name: "cdc-confirm-on-receipt", Bug: "confirms a transaction's position when it reads it, before publishing: a relay that dies in between never publishes it", Kills: "no-loss", New: variant(Options{ConfirmOnReceipt: true})},
	{Name: "cdc-confirm-whole", Bug: "publishes a batch once each and confirms its last position though part of it was refused", Kills: "no-loss", New: variant(Options{ConfirmWhole: true})},
	{Name: "cdc-late-slot", Bug: "creates its slot when a relay first starts: what committed before is not in it", Kills: "no-loss", New: variant(Options{LateSlot: true})},
	{Name: "cdc-keepalive-confirm", Bug: "answers the server's keepalives with the WAL end they carry, as pglogrepl's demo does and pgjdbc's automatic keepalive flush (42.7.0, pgjdbc#2941) could (yugabyte-db#33306, pgjdbc#3138, psycopg2#940): what it read but has not yet published is confirmed away", Kills: "no-loss", New: variant(Options{KeepaliveConfirms: true})},
	{Name: "cdc-strict-columns", Bug: "decodes a row only if it knows every column: after a migration adds one, every later event stops the relay, for ever", Kills: "no-loss", New: variant(Options{StrictColumns: true})},
	{Name: "cdc-temporary-slot", Bug: "streams from a temporary slot, gone with the relay's session: what commits while no relay streams is never decoded", Kills: "no-loss", New: variant(Options{TemporarySlot: true})},
}

func init() {
	for i := range Mutants {
		Mutants[i].Recovery, Mutants[i].Settings = Recovery, ServerSettings
	}
}

func variant(o Options) loopcheck.NewSubject {
	return func(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) { return Build(ctx, env, o) }
}

// flushWhole is cdc-confirm-whole's flush: each event once, a refused one
// left behind, and the batch's last position confirmed. (Its attempts are
// counted and kept to MaxAttempts, as the relay's are: one bug only.)
func (r *relay) flushWhole(ctx context.Context, st *streamState) error {
	last := st.ready[len(st.ready)-1].end
	for _, t := range st.ready {
		for _, ev := range t.events {
			n, err := r.countAttempt(ctx, ev.ID)
			if err != nil {
				return err
			}
			if n > r.s.env.MaxAttempts {
				if err := r.deadLetter(ctx, ev, "claimed too often"); err != nil {
					return err
				}
				continue
			}
			pctx, cancel := context.WithTimeout(ctx, callTimeout)
			_ = r.pub.Publish(pctx, ev) // the bug: a refusal is not waited out
			cancel()
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	st.ready = nil
	return st.confirm(ctx, last)
}
