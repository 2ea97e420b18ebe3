package refloop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/outboxcheck/outboxcheck/impl"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// ReportsClaims: a relay built with Options.ReportClaims reports its
// claims and completions (loopcheck.ClaimReporter), and the loop judges
// fencing from them.
func (s *Subject) ReportsClaims() bool { return s.over != "" }

var _ loopcheck.ClaimReporter = (*Subject)(nil)

// Where the seed's claim query (impl.DefaultQueries) names its
// candidates and what it returns: overClaim adds the claim each row is
// taken over from.
const (
	candidates = "SELECT id\n    FROM outbox_events"
	returned   = "event.created_at, event.attempts, event.claim_id"
)

// overClaim is claim returning, after each row, the claim that still
// held it (a PUBLISHING row whose lease ran out: every completion clears
// claim_id), read in the claim's own statement.
func overClaim(claim string) (string, error) {
	if strings.Count(claim, candidates) != 1 || strings.Count(claim, returned) != 1 {
		return "", errors.New("refloop: ReportClaims needs the seed's claim query, whose candidates and RETURNING it extends; this one was edited past that")
	}
	claim = strings.Replace(claim, candidates, "SELECT id, claim_id AS over\n    FROM outbox_events", 1)
	return strings.Replace(claim, returned, returned+", candidates.over", 1), nil
}

// reportingStep is the reference batch (impl.Dispatcher.DispatchBatch)
// that reports to log each claim, with the claim it took each event over
// from, and each completion whose outcome it knows, with whether it
// changed the row.
func reportingStep(d *impl.Dispatcher, log loopcheck.ClaimLog, query string) func(ctx context.Context, limit int) (int, []error) {
	return func(ctx context.Context, limit int) (int, []error) {
		now := d.Clock.Now().UTC()
		if _, err := d.Store.BuryExpired(ctx, now, d.Policy.MaxAttempts); err != nil {
			return 0, []error{fmt.Errorf("claim outbox events: %w", err)}
		}
		events, over, err := claimOver(ctx, d.Store.Session, query, now, d.Policy.Lease, limit, d.IDs.NewID())
		if err != nil {
			return 0, []error{fmt.Errorf("claim outbox events: %w", err)}
		}
		for i, ev := range events {
			log.Claimed(ev.ID, ev.ClaimID, over[i])
		}
		var failures []error
		for _, ev := range events {
			if err := send(ctx, d, log, ev); err != nil {
				failures = append(failures, err)
			}
		}
		return len(events), failures
	}
}

// send is impl.Dispatcher.Send, reporting each mark that returned.
func send(ctx context.Context, d *impl.Dispatcher, log loopcheck.ClaimLog, ev impl.Claimed) error {
	if err := d.Publish(ctx, ev); err != nil {
		changed, markErr := d.MarkFailed(ctx, ev, err)
		if markErr != nil {
			return fmt.Errorf("publish outbox event %s: %w", ev.ID, errors.Join(err, markErr))
		}
		log.Completed(ev.ID, ev.ClaimID, changed)
		return fmt.Errorf("publish outbox event %s: %w", ev.ID, err)
	}
	changed, err := d.MarkPublished(ctx, ev)
	if err != nil {
		return fmt.Errorf("mark outbox event %s published: %w", ev.ID, err)
	}
	log.Completed(ev.ID, ev.ClaimID, changed)
	return nil
}

// claimOver runs query (overClaim's) as impl.Store.Claim runs the claim:
// the events, and the claim each was taken over from ("" if none).
func claimOver(ctx context.Context, sess *impl.Session, query string, now time.Time, lease time.Duration, limit int, claimID string) ([]impl.Claimed, []string, error) {
	conn, err := sess.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	expires := now.Add(lease)
	rows, err := conn.Query(ctx, query, now, limit, claimID, expires)
	if err != nil {
		return nil, nil, err
	}
	var over []string
	events, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (impl.Claimed, error) {
		var from pgtype.Text // NULL: taken over from no claim
		c, err := impl.ScanClaimed(r, expires, &from)
		over = append(over, from.String)
		return c, err
	})
	return events, over, err
}
