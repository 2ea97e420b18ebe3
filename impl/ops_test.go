package impl_test

import (
	"errors"
	"testing"
	"time"
)

// NextAttemptAt is the earliest of the next due available_at and the next
// lease expiry; Stats count what operations must watch.
func TestNextAttemptAtAndStats(t *testing.T) {
	w := newWorld(t)
	d := w.dispatcher()
	if _, ok, err := d.NextAttemptAt(w.ctx); err != nil || ok {
		t.Fatalf("empty table: ok=%v err=%v, want none", ok, err)
	}
	a := w.pay(1)
	w.clock.Advance(10 * time.Second)
	w.pay(2)
	next, ok, err := d.NextAttemptAt(w.ctx)
	if err != nil || !ok || !next.Equal(epoch) {
		t.Fatalf("next = %v %v %v, want %v", next, ok, err, epoch)
	}
	got, err := d.Claim(w.ctx, 1) // claims a (older), lease to now+1m
	if err != nil || len(got) != 1 || got[0].ID != a {
		t.Fatalf("claim %v %v", got, err)
	}
	// Now the earliest is b's available_at (epoch+10s), before a's lease.
	if next, _, _ := d.NextAttemptAt(w.ctx); !next.Equal(epoch.Add(10 * time.Second)) {
		t.Fatalf("next = %v, want epoch+10s", next)
	}
	if _, err := d.Claim(w.ctx, 1); err != nil { // b too; now only leases remain
		t.Fatal(err)
	}
	if next, _, _ := d.NextAttemptAt(w.ctx); !next.Equal(epoch.Add(10*time.Second + time.Minute)) {
		t.Fatalf("next = %v, want a's lease expiry", next)
	}
	mustChange(t)(d.MarkFailed(w.ctx, got[0], errors.New("x")))

	w.clock.Advance(5 * time.Second)
	st, err := d.Store.Stats(w.ctx, w.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if st.Pending != 2 || st.Failed != 1 || st.Dead != 0 || st.OldestPendingAge != 15*time.Second {
		t.Fatalf("stats %+v, want 2 pending (oldest 15s), 1 failed, 0 dead", st)
	}
}
