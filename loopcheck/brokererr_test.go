package loopcheck

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// Each broker outcome is a sentinel an adapter can map with errors.Is:
// refusals wrap harness.ErrRefused, an ambiguous publish does not.
func TestBrokerOutcomesAreTyped(t *testing.T) {
	m := func(pay string) harness.Message { return harness.Message{ID: "e-" + pay, AggregateID: pay} }
	ctx := context.Background()
	b := newBroker(time.Now())
	b.setPoison("pay-1", forever)
	b.downFor(time.Minute)
	b.loseAck()
	type outcome struct {
		name    string
		err     error
		is      error
		refused bool
	}
	cases := []outcome{
		{"killed", b.publish(ctx, m("pay-2"), "dispatcher-0#1", true, nil, sending{}), ErrRelayKilled, true},
		{"poison", b.publish(ctx, m("pay-1"), "dispatcher-0#1", false, nil, sending{}), ErrPoison, true},
		{"down", b.publish(ctx, m("pay-2"), "dispatcher-0#1", false, nil, sending{}), ErrBrokerDown, true},
	}
	b.up()
	cases = append(cases, outcome{"ack lost", b.publish(ctx, m("pay-3"), "dispatcher-0#1", false, nil, sending{}), ErrAckLost, false})
	b.slowFor(time.Minute, time.Minute, 0)
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	slow := b.publish(short, m("pay-4"), "dispatcher-0#1", false, nil, sending{})
	cases = append(cases, outcome{"slow", slow, ErrSlowAck, false})
	for _, c := range cases {
		if !errors.Is(c.err, c.is) || errors.Is(c.err, harness.ErrRefused) != c.refused {
			t.Errorf("%s: %v: is %v %v, refused %v, want %v", c.name, c.err, c.is, errors.Is(c.err, c.is), errors.Is(c.err, harness.ErrRefused), c.refused)
		}
	}
	if !errors.Is(slow, context.DeadlineExceeded) {
		t.Errorf("a slow ack past the caller's deadline does not say so: %v", slow)
	}
}
