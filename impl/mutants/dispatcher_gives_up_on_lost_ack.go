package mutants

import (
	"context"
	"strings"
	"time"

	"github.com/outboxcheck/outboxcheck/impl"
)

// DispatcherGivesUpOnLostAck treats a publish whose acknowledgement never
// came as a permanent failure: "the broker timed out, the message is
// poison". It parks the event as FAILED with no next attempt, and nothing
// ever publishes it again — though the broker may never have had it. The
// harness sees it the moment the row is written: the backoff schedule
// (next attempt at 2^attempts s) is broken, long before the loss.
var DispatcherGivesUpOnLostAck = Mutant{
	Name:        "dispatcher-gives-up-on-lost-ack",
	Bug:         "a lost publish acknowledgement is treated as a permanent failure with no retry path",
	Kills:       "backoff",
	NeedsFaults: true,
	MarkFailed: func(ctx context.Context, d *impl.Dispatcher, c impl.Claimed, cause error) (bool, error) {
		if cause != nil && strings.Contains(cause.Error(), "acknowledgement") {
			never := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
			return d.Store.MarkFailed(ctx, c.ID, c.ClaimID, impl.StatusFailed, never, "permanent: "+cause.Error())
		}
		return d.MarkFailed(ctx, c, cause)
	},
}
