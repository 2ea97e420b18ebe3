package impl_test

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// Snapshot reads in one round trip exactly what Rows, Effects, Stats and
// NextAttemptAt read one by one: here with rows in PENDING, FAILED,
// PUBLISHING and PUBLISHED, and a ledger credit.
func TestSnapshotIsTheFourReads(t *testing.T) {
	w := newWorld(t)
	d := w.dispatcher()
	check := func() {
		t.Helper()
		snap, err := w.admin.Snapshot(w.ctx, w.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		rows, err1 := w.admin.Rows(w.ctx)
		effects, err2 := w.consumer.Effects(w.ctx)
		st, err3 := w.admin.Stats(w.ctx, w.clock.Now())
		next, ok, err4 := w.admin.NextAttemptAt(w.ctx)
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(snap.Rows, rows) || !reflect.DeepEqual(snap.Effects, effects) || snap.Stats != st ||
			!snap.NextAttemptAt.Equal(next) || snap.HasNext != ok {
			t.Fatalf("snapshot %+v\nwant rows %+v effects %+v stats %+v next %v %v", snap, rows, effects, st, next, ok)
		}
	}
	check() // empty: no next attempt
	for n := 1; n <= 4; n++ {
		w.pay(n)
	}
	w.clock.Advance(3 * time.Second)
	got, err := d.Claim(w.ctx, 3)
	if err != nil || len(got) != 3 {
		t.Fatalf("claim %v %v", got, err)
	}
	mustChange(t)(d.MarkFailed(w.ctx, got[0], errors.New("x")))
	if err := d.Publish(w.ctx, got[1]); err != nil {
		t.Fatal(err)
	}
	mustChange(t)(d.MarkPublished(w.ctx, got[1]))
	w.deliverAll()
	w.clock.Advance(time.Second)
	check()
	if snap, _ := w.admin.Snapshot(w.ctx, w.clock.Now()); len(snap.Rows) != 4 || len(snap.Effects) != 1 || snap.Stats.Failed != 1 {
		t.Fatalf("snapshot %+v: want 4 rows, 1 credit, 1 failed", snap)
	}
}
