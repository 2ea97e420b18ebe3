package mutants

import (
	"context"
	"crypto/md5"
	"fmt"

	"github.com/outboxcheck/outboxcheck/impl"
)

// PublishNewEventID stamps every publish attempt with a fresh message id
// (a new UUID per send, as a broker client does by default) instead of the
// event_id fixed at creation. A republished event looks new to every
// consumer, and the inbox cannot deduplicate it.
var PublishNewEventID = Mutant{
	Name:  "publish-new-event-id",
	Bug:   "a new event_id on each publish attempt instead of the one fixed at creation",
	Kills: "stable-id",
	Publish: func(ctx context.Context, d *impl.Dispatcher, c impl.Claimed) error {
		msg := impl.MessageOf(c)
		sum := md5.Sum([]byte(fmt.Sprintf("%s/%d", c.ID, c.Attempts)))
		msg.ID = fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
		return d.Publisher.Publish(ctx, msg)
	},
}
