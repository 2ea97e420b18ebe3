package mutants

import (
	"context"

	"github.com/outboxcheck/outboxcheck/impl"
)

// MarkPublishedBeforePublishing copies a relay that records success first
// ("so we never send twice") and then sends: when the send fails, or the
// process dies in between, the row already says PUBLISHED and nothing will
// ever send the event again.
var MarkPublishedBeforePublishing = Mutant{
	Name:  "mark-published-before-publishing",
	Bug:   "MarkPublished before publishing: a failed send leaves a PUBLISHED event that was never sent",
	Kills: "no-loss",
	Publish: func(ctx context.Context, d *impl.Dispatcher, c impl.Claimed) error {
		if _, err := d.MarkPublished(ctx, c); err != nil {
			return err
		}
		return d.Publisher.Publish(ctx, impl.MessageOf(c))
	},
}
