package refloop

import (
	"context"

	"github.com/outboxcheck/outboxcheck/impl/mutants"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// MarkUnfenced is a loop mutant of the bug class "completion fenced by
// status alone, not by the attempt": impl/mutants.MarkPublishedNoFence's
// mark (PUBLISHED wherever the row is PUBLISHING, whoever's claim it is),
// with the relays reporting their claims. A relay whose ack came after
// its lease ran out marks PUBLISHED the event another relay has taken
// over and is still publishing: its report says the mark changed the
// row, and fencing kills it.
func MarkUnfenced(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	return Build(ctx, env, Options{Notify: true, ReportClaims: true, Queries: mutants.MarkPublishedNoFence.Queries})
}
