package loopcheck

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// Each broker fault counts the publishes it changed: an outage its
// refusals, a poison its payment's, a lost ack the one ack it lost, a
// slow window its late acks; one that met no publish counts none.
func TestSpellsCountWhatTheyChanged(t *testing.T) {
	b := newBroker(time.Now())
	pub := func(pay string) error {
		return b.publish(context.Background(), harness.Message{ID: "e-" + pay, AggregateID: pay}, "dispatcher-0#1", false, nil, sending{})
	}
	b.downFor(time.Hour)
	_ = pub("pay-1")
	_ = pub("pay-1")
	b.up()
	b.downFor(0) // the retry budget spent: no outage
	b.setPoison("pay-2", 1)
	_ = pub("pay-2")
	_ = pub("pay-2")
	b.slowFor(time.Hour, time.Millisecond, 0)
	_ = pub("pay-4")
	b.slowFor(time.Hour, time.Millisecond, 0) // replaces the first, ended now
	b.loseAck()
	b.loseAck()
	_ = pub("pay-3") // its ack lost: not late
	var got []string
	for _, s := range b.castSpells() {
		got = append(got, fmt.Sprintf("%s %d", s.kind, s.hits))
	}
	want := "[broker-down 2 broker-down 0 poison 1 broker-slow 1 broker-slow 0 ack-lost 1 ack-lost 0]"
	if fmt.Sprint(got) != want {
		t.Fatalf("spells %v, want %s", got, want)
	}
}

// A payment committed into a slow window has its first accepted publish
// acknowledged late even after the window: refused ones do not count,
// and later ones are prompt. It is a hit of its own window, once.
func TestFirstPublishOfAPaymentCommittedIntoASlowWindow(t *testing.T) {
	b := newBroker(time.Now())
	pub := func(pay string) {
		_ = b.publish(context.Background(), harness.Message{ID: "e-" + pay, AggregateID: pay}, "dispatcher-0#1", false, nil, sending{})
	}
	until := b.slowFor(time.Millisecond, 20*time.Millisecond, 0)
	b.slowFirst("pay-1")
	b.slowFirst("pay-2")
	time.Sleep(time.Until(until))
	b.downFor(time.Hour)
	pub("pay-1") // refused: the broker is down
	b.up()
	pub("pay-1")
	pub("pay-1")
	pub("pay-2")
	var got []string
	for _, a := range b.record() {
		got = append(got, fmt.Sprintf("%s %s %v", a.PaymentID, a.Outcome, a.Late))
	}
	want := "[pay-1 down 0s pay-1 accepted-late 20ms pay-1 accepted 0s pay-2 accepted-late 20ms]"
	if fmt.Sprint(got) != want {
		t.Fatalf("attempts %v, want %s", got, want)
	}
	if s := b.castSpells()[0]; s.kind != "broker-slow" || s.hits != 2 {
		t.Fatalf("the window: %s with %d hits, want broker-slow with 2", s.kind, s.hits)
	}
}
