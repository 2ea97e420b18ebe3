package jetstream

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/outboxcheck/outboxcheck/harness"
)

// Stored is one message the stream holds, in stream order.
type Stored struct {
	Seq   uint64
	MsgID string // its Nats-Msg-Id
	harness.Message
}

// Messages reads back every message the stream holds, straight from
// the server (not through the link), in order.
func (b *Broker) Messages(ctx context.Context) ([]Stored, error) { return b.Since(ctx, 0) }

// Since reads back the messages the stream holds after sequence number
// after, in order.
func (b *Broker) Since(ctx context.Context, after uint64) ([]Stored, error) {
	ctx, cancel := context.WithTimeout(ctx, b.opts.CallTimeout)
	defer cancel()
	info, err := b.stream.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("jetstream: stream info: %w", err)
	}
	var out []Stored
	for seq := max(info.State.FirstSeq, after+1); seq > 0 && seq <= info.State.LastSeq; seq++ {
		raw, err := b.stream.GetMsg(ctx, seq)
		if err != nil {
			return nil, fmt.Errorf("jetstream: message %d: %w", seq, err)
		}
		s := Stored{Seq: seq, MsgID: raw.Header.Get(msgIDHeader)}
		if err := json.Unmarshal(raw.Data, &s.Message); err != nil {
			return nil, fmt.Errorf("jetstream: message %d is not an event: %w", seq, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// Reset empties the broker for a new schedule: the stream is deleted and
// made again, its messages and its dedupe memory gone (a purge would
// keep the ids it saw within the window).
func (b *Broker) Reset(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, b.opts.CallTimeout)
	defer cancel()
	if err := b.js.DeleteStream(ctx, Stream); err != nil {
		return fmt.Errorf("jetstream: delete the stream: %w", err)
	}
	return b.createStream(ctx)
}

// Duplicates counts, per Nats-Msg-Id, the messages the stream holds
// beyond the first: retries that came after the dedupe window.
func Duplicates(msgs []Stored) map[string]int {
	seen, out := map[string]bool{}, map[string]int{}
	for _, m := range msgs {
		if seen[m.MsgID] {
			out[m.MsgID]++
		}
		seen[m.MsgID] = true
	}
	return out
}
