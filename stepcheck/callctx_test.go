package stepcheck

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A call ended early looks to the subject exactly like one whose deadline
// passed: Done is closed, Err is context.DeadlineExceeded (pgx then calls
// it a timeout), the deadline is no later than now, and contexts derived
// from it end the same way.
func TestCallEndedEarlyIsADeadline(t *testing.T) {
	ctx, cancel := newCallCtx(context.Background(), time.Hour)
	defer cancel()
	child, stop := context.WithTimeout(ctx, time.Hour)
	defer stop()
	ctx.endEarly()
	select {
	case <-child.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a context derived from the call did not end with it")
	}
	for _, c := range []context.Context{ctx, child} {
		if !errors.Is(c.Err(), context.DeadlineExceeded) {
			t.Fatalf("Err = %v, want context.DeadlineExceeded", c.Err())
		}
		if d, ok := c.Deadline(); !ok || d.After(time.Now()) {
			t.Fatalf("Deadline = %v, %v: want one that has passed", d, ok)
		}
	}
	if !ctx.endedEarly() {
		t.Fatal("endedEarly = false after endEarly")
	}
}

// Its own deadline, a cancel and a parent's end work as
// context.WithTimeout's do, and none of them counts as ended early.
func TestCallContextEndsAsWithTimeout(t *testing.T) {
	ctx, cancel := newCallCtx(context.Background(), time.Millisecond)
	<-ctx.Done()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) || ctx.endedEarly() {
		t.Fatalf("after its deadline: Err %v, early %v", ctx.Err(), ctx.endedEarly())
	}
	cancel()

	ctx, cancel = newCallCtx(context.Background(), time.Hour)
	cancel()
	if !errors.Is(ctx.Err(), context.Canceled) || ctx.endedEarly() {
		t.Fatalf("after cancel: Err %v, early %v", ctx.Err(), ctx.endedEarly())
	}
	ctx.endEarly() // too late: the call is over
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("endEarly after cancel changed Err to %v", ctx.Err())
	}

	parent, stop := context.WithCancel(context.Background())
	ctx, cancel = newCallCtx(parent, time.Hour)
	defer cancel()
	stop()
	<-ctx.Done()
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("after the parent's cancel: Err %v", ctx.Err())
	}
}
