package impl_test

import (
	"errors"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/impl"
)

// Seed: "提交后崩溃" — the producer commits and the process dies before any
// publish. The event is in the table, so a dispatcher started later finds it.
func TestCrashAfterProducerCommitEventIsDeliveredLater(t *testing.T) {
	w := newWorld(t)
	id := w.pay(1)
	w.producer.Session.Cut() // the producer process dies right after COMMIT

	if n, errs := w.dispatcher().DispatchBatch(w.ctx, 10); n != 1 || errs != nil {
		t.Fatalf("DispatchBatch = %d, %v; want 1 event, no errors", n, errs)
	}
	msgs := w.broker.messages()
	if len(msgs) != 1 || msgs[0].ID != id {
		t.Fatalf("broker has %v, want one message %s", msgs, id)
	}
	w.deliverAll()
	if got := w.effectsOf(); got[id] != 1 || len(got) != 1 {
		t.Fatalf("effects %v, want exactly one for %s", got, id)
	}
	if r := w.row(id); r.Status != impl.StatusPublished {
		t.Fatalf("status %s, want PUBLISHED", r.Status)
	}
}

// Seed: "消息送达后崩溃" — the broker accepted the message and the dispatcher
// died before MarkPublished. After the lease the same event_id goes out
// again and the inbox keeps the effect at one.
func TestCrashAfterBrokerAcceptedIsRepublishedWithSameID(t *testing.T) {
	w := newWorld(t)
	id := w.pay(1)
	d1 := w.dispatcher()
	c := w.claimOne(d1)
	if err := d1.Publish(w.ctx, c); err != nil {
		t.Fatal(err)
	}
	d1.Store.Session.Cut() // dies before MarkPublished

	w.clock.Advance(time.Minute - time.Millisecond)
	w.claimNone(w.dispatcher()) // the lease still holds
	w.clock.Advance(time.Millisecond)
	if n, errs := w.dispatcher().DispatchBatch(w.ctx, 10); n != 1 || errs != nil {
		t.Fatalf("DispatchBatch = %d, %v; want 1, none", n, errs)
	}
	msgs := w.broker.messages()
	if len(msgs) != 2 || msgs[0].ID != id || msgs[1].ID != id {
		t.Fatalf("broker has %+v, want %s twice", msgs, id)
	}
	if string(msgs[0].Payload) != string(msgs[1].Payload) {
		t.Fatalf("payload changed between publishes: %s vs %s", msgs[0].Payload, msgs[1].Payload)
	}
	w.deliverAll()
	if got := w.effectsOf(); got[id] != 1 {
		t.Fatalf("effects %v, want exactly one for %s", got, id)
	}
	if r := w.row(id); r.Status != impl.StatusPublished || r.Attempts != 2 {
		t.Fatalf("row %s attempts %d, want PUBLISHED after 2", r.Status, r.Attempts)
	}
}

// A claimant whose lease expired and was taken over can change nothing.
func TestStaleClaimantCannotOverwriteNewerClaim(t *testing.T) {
	w := newWorld(t)
	id := w.pay(1)
	old, cur := w.dispatcher(), w.dispatcher()
	stale := w.claimOne(old)
	w.clock.Advance(time.Minute)
	fresh := w.claimOne(cur)
	if fresh.ClaimID == stale.ClaimID {
		t.Fatal("a new claim reused the old claim_id")
	}

	if changed, err := old.MarkPublished(w.ctx, stale); err != nil || changed {
		t.Fatalf("stale MarkPublished = %v, %v; want no change", changed, err)
	}
	if changed, err := old.MarkFailed(w.ctx, stale, errors.New("stale")); err != nil || changed {
		t.Fatalf("stale MarkFailed = %v, %v; want no change", changed, err)
	}
	r := w.row(id)
	if r.Status != impl.StatusPublishing || r.ClaimID != fresh.ClaimID || r.Attempts != 2 {
		t.Fatalf("row %+v, want PUBLISHING under %s with 2 attempts", r, fresh.ClaimID)
	}
	if changed, err := cur.MarkPublished(w.ctx, fresh); err != nil || !changed {
		t.Fatalf("current MarkPublished = %v, %v; want a change", changed, err)
	}
	// And once PUBLISHED, the stale claimant cannot revert it either.
	if changed, _ := old.MarkFailed(w.ctx, stale, errors.New("late")); changed {
		t.Fatal("stale MarkFailed reverted a PUBLISHED row")
	}
	if r := w.row(id); r.Status != impl.StatusPublished {
		t.Fatalf("status %s, want PUBLISHED", r.Status)
	}
}

// Claiming increments attempts first, so the first failure waits 2^1 s.
func TestFirstFailureWaitsTwoSecondsNotOne(t *testing.T) {
	w := newWorld(t)
	id := w.pay(1)
	d := w.dispatcher()
	c := w.claimOne(d)
	if changed, err := d.MarkFailed(w.ctx, c, errors.New("broker down")); err != nil || !changed {
		t.Fatalf("MarkFailed = %v, %v", changed, err)
	}
	r := w.row(id)
	if r.Status != impl.StatusFailed || !r.AvailableAt.Equal(epoch.Add(2*time.Second)) || r.LastError != "broker down" {
		t.Fatalf("row %+v, want FAILED available at +2s with the error", r)
	}
	w.clock.Advance(time.Second)
	w.claimNone(d)
	w.clock.Advance(time.Second - time.Millisecond)
	w.claimNone(d)
	w.clock.Advance(time.Millisecond)
	if c2 := w.claimOne(d); c2.Attempts != 2 {
		t.Fatalf("second claim has attempts %d, want 2", c2.Attempts)
	}
}

// The 20th failed attempt is DEAD; the 19th is still FAILED; backoff caps at 2^10 s.
func TestTwentiethFailedAttemptIsDead(t *testing.T) {
	w := newWorld(t)
	id := w.pay(1)
	d := w.dispatcher()
	w.broker.refuse = true
	for attempt := 1; attempt <= 20; attempt++ {
		n, errs := d.DispatchBatch(w.ctx, 10)
		if n != 1 || len(errs) != 1 {
			t.Fatalf("attempt %d: DispatchBatch = %d, %v", attempt, n, errs)
		}
		r := w.row(id)
		want := impl.StatusFailed
		if attempt == 20 {
			want = impl.StatusDead
		}
		wait := time.Second << min(attempt, 10)
		if r.Status != want || r.Attempts != attempt || !r.AvailableAt.Equal(w.clock.Now().Add(wait)) {
			t.Fatalf("attempt %d: row %s/%d available %v; want %s/%d at now+%v",
				attempt, r.Status, r.Attempts, r.AvailableAt, want, attempt, wait)
		}
		w.clock.Advance(wait)
	}
	w.clock.Advance(24 * time.Hour)
	w.claimNone(d)
	st, err := d.Store.Stats(w.ctx, w.clock.Now())
	if err != nil || st.Dead != 1 || st.Pending != 0 {
		t.Fatalf("stats %+v, %v; want 1 dead, 0 pending", st, err)
	}
}

// Redrive brings a DEAD event back under the same event_id; the consumer
// still credits once even when it sees the event twice.
func TestRedriveKeepsEventIDAndEffectStaysOnce(t *testing.T) {
	w := newWorld(t)
	id := w.pay(1)
	d := w.dispatcher()
	d.Policy.MaxAttempts = 1
	c := w.claimOne(d)
	if err := d.Publish(w.ctx, c); err != nil { // reached the broker, but the ack was "lost"
		t.Fatal(err)
	}
	if changed, err := d.MarkFailed(w.ctx, c, errors.New("ack lost")); err != nil || !changed {
		t.Fatalf("MarkFailed = %v, %v", changed, err)
	}
	if r := w.row(id); r.Status != impl.StatusDead {
		t.Fatalf("status %s, want DEAD", r.Status)
	}
	if changed, err := d.Store.Redrive(w.ctx, id, w.clock.Now()); err != nil || !changed {
		t.Fatalf("Redrive = %v, %v", changed, err)
	}
	if changed, _ := d.Store.Redrive(w.ctx, id, w.clock.Now()); changed {
		t.Fatal("Redrive changed a row that is not DEAD")
	}
	if n, errs := d.DispatchBatch(w.ctx, 10); n != 1 || errs != nil {
		t.Fatalf("DispatchBatch = %d, %v", n, errs)
	}
	for _, m := range w.broker.messages() {
		if m.ID != id {
			t.Fatalf("redriven publish carries %s, want %s", m.ID, id)
		}
	}
	w.deliverAll()
	if got := w.effectsOf(); got[id] != 1 || len(got) != 1 {
		t.Fatalf("effects %v, want one for %s", got, id)
	}
}

// Cleanup deletes only PUBLISHED rows past retention.
func TestCleanupNeverDeletesUnfinishedRows(t *testing.T) {
	w := newWorld(t)
	d := w.dispatcher()
	d.Policy.MaxAttempts = 1
	ids := make([]string, 5) // published, dead, failed, publishing, pending
	for i := range ids {
		ids[i] = w.pay(i)
		w.clock.Advance(time.Millisecond) // distinct created_at: claim order is defined
	}
	claims := make([]impl.Claimed, 4)
	for i := range claims {
		got, err := d.Claim(w.ctx, 1)
		if err != nil || len(got) != 1 || got[0].ID != ids[i] {
			t.Fatalf("claim %d took %v (%v), want %s (oldest first)", i, got, err, ids[i])
		}
		claims[i] = got[0]
	}
	mustChange(t)(d.MarkPublished(w.ctx, claims[0]))
	mustChange(t)(d.MarkFailed(w.ctx, claims[1], errors.New("x"))) // MaxAttempts 1: DEAD
	d.Policy.MaxAttempts = 20
	mustChange(t)(d.MarkFailed(w.ctx, claims[2], errors.New("x")))
	w.clock.Advance(30 * 24 * time.Hour)

	// Retention not yet passed for a row published just now: nothing goes.
	if n, err := d.Store.Cleanup(w.ctx, epoch, time.Hour); err != nil || n != 0 {
		t.Fatalf("Cleanup inside retention = %d, %v; want 0", n, err)
	}
	n, err := d.Store.Cleanup(w.ctx, w.clock.Now(), 24*time.Hour)
	if err != nil || n != 1 {
		t.Fatalf("Cleanup = %d, %v; want 1", n, err)
	}
	rows, _ := w.admin.Rows(w.ctx)
	got := map[string]impl.Status{}
	for _, r := range rows {
		got[r.ID] = r.Status
	}
	want := map[string]impl.Status{ids[1]: impl.StatusDead, ids[2]: impl.StatusFailed,
		ids[3]: impl.StatusPublishing, ids[4]: impl.StatusPending}
	if len(got) != len(want) {
		t.Fatalf("rows after cleanup %v, want %v", got, want)
	}
	for id, st := range want {
		if got[id] != st {
			t.Fatalf("rows after cleanup %v, want %v", got, want)
		}
	}
}

func mustChange(t *testing.T) func(bool, error) {
	t.Helper()
	return func(changed bool, err error) {
		t.Helper()
		if err != nil || !changed {
			t.Fatalf("changed=%v err=%v, want a change", changed, err)
		}
	}
}

// A rolled-back producer transaction leaves neither payment nor event.
func TestRolledBackProducerLeavesNothingToPublish(t *testing.T) {
	w := newWorld(t)
	if err := w.producer.AbandonPayment(w.ctx, payment(1), w.clock.Now()); err != nil {
		t.Fatal(err)
	}
	w.claimNone(w.dispatcher())
	rows, err := w.admin.Rows(w.ctx)
	if err != nil || len(rows) != 0 {
		t.Fatalf("rows %v, %v; want none", rows, err)
	}
	conn, _ := w.admin.Session.Conn(w.ctx)
	var n int
	if err := conn.QueryRow(w.ctx, "SELECT count(*) FROM payments").Scan(&n); err != nil || n != 0 {
		t.Fatalf("payments %d, %v; want 0", n, err)
	}
}
