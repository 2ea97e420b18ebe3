package impl_test

import (
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/impl"
)

// An event that crashes every relay publishing it never fails: each claim
// expires. With BuryExpiredQuery, the claim after the one that reached the
// attempt limit makes it DEAD; with the seed's queries it is claimed again
// for ever (a crash loop).
func TestExpiredClaimAtTheLimitIsBuried(t *testing.T) {
	for _, bury := range []bool{false, true} {
		t.Run(map[bool]string{false: "seed", true: "bury"}[bury], func(t *testing.T) {
			w := newWorld(t)
			id := w.pay(1)
			d := w.dispatcher()
			d.Policy.MaxAttempts = 3
			if bury {
				d.Store.Queries.BuryExpired = impl.BuryExpiredQuery
			}
			for n := 1; n <= 3; n++ { // each claim's relay dies mid-publish
				if c := w.claimOne(d); c.Attempts != n {
					t.Fatalf("claim %d has attempts %d", n, c.Attempts)
				}
				w.clock.Advance(d.Policy.Lease)
			}
			got, err := d.Claim(w.ctx, 10)
			if err != nil {
				t.Fatal(err)
			}
			r := w.row(id)
			switch {
			case bury && (len(got) != 0 || r.Status != impl.StatusDead):
				t.Fatalf("claimed %d, row %s; want it DEAD and not claimed", len(got), r.Status)
			case !bury && (len(got) != 1 || r.Status != impl.StatusPublishing || r.Attempts != 4):
				t.Fatalf("claimed %d, row %s attempts %d; want the seed's claim again (4 attempts)", len(got), r.Status, r.Attempts)
			}
		})
	}
}

// A claim still current at the limit is left alone: the relay may yet
// publish it and record the outcome.
func TestCurrentClaimAtTheLimitIsNotBuried(t *testing.T) {
	w := newWorld(t)
	id := w.pay(1)
	d := w.dispatcher()
	d.Policy.MaxAttempts = 1
	d.Store.Queries.BuryExpired = impl.BuryExpiredQuery
	c := w.claimOne(d)
	w.clock.Advance(d.Policy.Lease - time.Millisecond)
	w.claimNone(d)
	if r := w.row(id); r.Status != impl.StatusPublishing {
		t.Fatalf("row %s, want PUBLISHING", r.Status)
	}
	mustChange(t)(d.MarkPublished(w.ctx, c))
}
