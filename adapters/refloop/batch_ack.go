package refloop

import (
	"context"
	"errors"
	"time"

	"github.com/outboxcheck/outboxcheck/impl"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// batchAckDeadline is BatchAck's deadline for one message's ack.
const batchAckDeadline = 500 * time.Millisecond

// BatchAck is a loop mutant of bug class (b), a batch ack that covers
// rows never processed: the relay claims a batch and publishes it in
// order, each message with an ack deadline; when one times out (the
// broker is slow) it stops there, yet its batch ack then marks every
// row of the batch published, the ones it never sent among them. With a
// prompt broker it is correct. no-loss kills it.
func BatchAck(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	return Build(ctx, env, Options{Notify: true, Step: batchAck, AckDeadline: batchAckDeadline})
}

func batchAck(d *impl.Dispatcher) func(ctx context.Context, limit int) (int, []error) {
	return func(ctx context.Context, limit int) (int, []error) {
		events, err := d.Claim(ctx, limit)
		if err != nil {
			return 0, []error{err}
		}
		var errs []error
		ack := make([]impl.Claimed, 0, len(events))
		for k, ev := range events {
			pctx, cancel := context.WithTimeout(ctx, batchAckDeadline)
			err := d.Publish(pctx, ev)
			cancel()
			if errors.Is(err, context.DeadlineExceeded) {
				ack = append(ack, events[k:]...) // "the batch is done": the bug
				break
			}
			if err != nil {
				_, _ = d.MarkFailed(ctx, ev, err)
				errs = append(errs, err)
				continue
			}
			ack = append(ack, ev)
		}
		for _, ev := range ack {
			if _, err := d.MarkPublished(ctx, ev); err != nil {
				errs = append(errs, err)
			}
		}
		return len(events), errs
	}
}

// BatchAckLong is the same bug in a relay built as such libraries are:
// its claim is the row locks of the transaction it publishes in (FOR
// UPDATE SKIP LOCKED), each publish waits up to a usual 30 s ack
// deadline, and the batch's rows are marked in that transaction. No
// lease runs out under it, so no other relay takes its rows over: only
// a broker that acknowledges later than 30 s shows the bug, and the
// nemesis reaches it because the subject declares the deadline
// (loopcheck.Deadliner). no-loss kills it.
func BatchAckLong(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	s, err := Build(ctx, env, Options{Notify: true, AckDeadline: 30 * time.Second})
	if err != nil {
		return s, err
	}
	return lockHeld{Subject: s, skipLocked: true, bounded: true, batchAck: true}, nil
}
