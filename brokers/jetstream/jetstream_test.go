package jetstream_test

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/brokers/jetstream"
	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
)

func start(t *testing.T, window time.Duration) *jetstream.Broker {
	t.Helper()
	b, err := jetstream.Start(context.Background(), jetstream.Options{DedupeWindow: window})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func publisher(t *testing.T, b *jetstream.Broker) *jetstream.Publisher {
	t.Helper()
	p, err := b.NewPublisher("relay-0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func publish(p *jetstream.Publisher, m harness.Message, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return p.Publish(ctx, m)
}

func stored(t *testing.T, b *jetstream.Broker) []jetstream.Stored {
	t.Helper()
	msgs, err := b.Messages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

var event = harness.Message{ID: "ev-1", Type: "PaymentCreated", AggregateID: "pay-1", Payload: []byte(`{"amount":100}`)}

// A retry within the dedupe window is acknowledged and dropped; one
// after it is stored again: what Nats-Msg-Id gives a relay, and where it
// stops. The window is a lower bound the test checks, never a time it
// waits for exactly: it retries until the broker stores the retry.
func TestDedupeHoldsWithinTheWindowOnly(t *testing.T) {
	const window = 300 * time.Millisecond
	b := start(t, window)
	p := publisher(t, b)
	first := time.Now()
	for range 2 {
		if err := publish(p, event, 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(stored(t, b)); n != 1 || p.DuplicateAcks() != 1 {
		t.Fatalf("a retry at once: the stream holds %d, %d duplicate acks; want 1 and 1", n, p.DuplicateAcks())
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a retry was never stored again")
		}
		dups := p.DuplicateAcks()
		if err := publish(p, event, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		if p.DuplicateAcks() == dups {
			break
		}
	}
	if since := time.Since(first); since < window {
		t.Errorf("a retry %v after the first publish was stored again: inside the %v window", since, window)
	}
	msgs := stored(t, b)
	if len(msgs) != 2 || jetstream.Duplicates(msgs)["ev-1"] != 1 || msgs[1].AggregateID != "pay-1" || string(msgs[1].Payload) != `{"amount":100}` {
		t.Fatalf("after the window: %+v", msgs)
	}
}

// The acknowledgement lost on the wire (the link drops the broker's
// reply and closes the connection): the relay sees an ambiguous publish
// (harness.ErrAckLost), the stream has the message, and the relay's
// retry, within the window, is dropped as a duplicate.
func TestAckLostOnTheWireIsAmbiguous(t *testing.T) {
	b := start(t, 10*time.Second)
	p := publisher(t, b)
	if err := publish(p, harness.Message{ID: "ev-0", AggregateID: "pay-0"}, 5*time.Second); err != nil {
		t.Fatal(err) // connected, and the stream answers
	}
	if err := b.Net.Inject(jetstream.Link, faults.Fault{Kind: faults.LostReply}); err != nil {
		t.Fatal(err)
	}
	err := publish(p, event, time.Second)
	if !errors.Is(err, harness.ErrAckLost) {
		t.Fatalf("publish with its reply lost: %v, want ErrAckLost", err)
	}
	if msgs := stored(t, b); len(msgs) != 2 || msgs[1].MsgID != "ev-1" {
		t.Fatalf("the stream after a lost ack: %+v, want ev-0 and ev-1", msgs)
	}
	b.Net.Heal(jetstream.Link)
	retry(t, p, event)
	if msgs := stored(t, b); len(msgs) != 2 || p.DuplicateAcks() != 1 {
		t.Fatalf("the retry within the window: the stream holds %d, %d duplicate acks; want 2 and 1", len(msgs), p.DuplicateAcks())
	}
}

// retry publishes m until the broker acknowledges it (the publisher
// reconnects by itself), within a minute.
func retry(t *testing.T, p *jetstream.Publisher, m harness.Message) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err = publish(p, m, time.Second); err == nil {
			return
		}
	}
	t.Fatalf("no ack within a minute: %v", err)
}

// A broker link down: the publish is ambiguous (no reply), and once it
// is up again the publisher reconnects and its retry is acknowledged.
func TestLinkDownThenUp(t *testing.T) {
	b := start(t, 10*time.Second)
	p := publisher(t, b)
	retry(t, p, harness.Message{ID: "ev-0", AggregateID: "pay-0"})
	if err := b.Net.Down(jetstream.Link); err != nil {
		t.Fatal(err)
	}
	if err := publish(p, event, 300*time.Millisecond); !errors.Is(err, harness.ErrAckLost) {
		t.Fatalf("publish through a link down: %v, want ErrAckLost", err)
	}
	if err := b.Net.Up(jetstream.Link); err != nil {
		t.Fatal(err)
	}
	retry(t, p, event)
	msgs := stored(t, b)
	if len(msgs) != 2 || jetstream.Duplicates(msgs)["ev-1"] != 0 {
		t.Fatalf("after the link came back: %+v", msgs)
	}
}

// Close removes the broker's store and stops its server and its link.
func TestCloseLeavesNothing(t *testing.T) {
	b, err := jetstream.Start(context.Background(), jetstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir, addr := b.StoreDir(), b.ServerAddr()
	url, err := b.URL()
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	b.Close()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the store %s outlived Close: %v", dir, err)
	}
	for _, a := range []string{addr, strings.TrimPrefix(url, "nats://")} {
		if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			c.Close()
			t.Errorf("%s still accepts connections after Close", a)
		}
	}
}

// Reset empties the stream and its dedupe memory: the same id published
// again right after is stored.
func TestResetForgetsMessagesAndIDs(t *testing.T) {
	b := start(t, time.Minute)
	p := publisher(t, b)
	retry(t, p, event)
	if err := b.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	if msgs := stored(t, b); len(msgs) != 0 {
		t.Fatalf("after Reset the stream holds %+v", msgs)
	}
	retry(t, p, event)
	if msgs, err := b.Since(context.Background(), 0); err != nil || len(msgs) != 1 || p.DuplicateAcks() != 0 {
		t.Fatalf("after Reset, the same id again: %+v, %v, %d duplicate acks", msgs, err, p.DuplicateAcks())
	}
}
