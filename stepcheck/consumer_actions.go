package stepcheck

import (
	"context"
	"errors"
	"fmt"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/model"
)

var errCrash = errors.New("consumer crashed at failpoint")

// pickMessage draws any message the broker carries: duplicates and
// reordering are allowed.
func (m *machine) pickMessage(t *rapid.T) int {
	if len(m.broker.Log) == 0 {
		skip("broker is empty")
	}
	return rapid.IntRange(0, len(m.broker.Log)-1).Draw(t, "message")
}

// Deliver hands a message to a consumer.
func (m *machine) Deliver(t *rapid.T) {
	i := m.pickMessage(t)
	c := rapid.IntRange(0, m.opts.Consumers-1).Draw(t, "consumer")
	m.deliver(t, c, i, "")
}

// CrashConsumer delivers a message to a consumer that dies before its
// commit, or after it and before the acknowledgement.
func (m *machine) CrashConsumer(t *rapid.T) {
	i := m.pickMessage(t)
	c := rapid.IntRange(0, m.opts.Consumers-1).Draw(t, "consumer")
	at := rapid.SampledFrom([]harness.Failpoint{harness.BeforeCommit, harness.AfterCommit}).Draw(t, "where")
	m.sum.Crashes.ConsumerScheduled++
	m.deliver(t, c, i, at)
}

func (m *machine) deliver(t *rapid.T, c, i int, crashAt harness.Failpoint) {
	msg := m.broker.Log[i]
	a := harness.Actor{Role: harness.Consumer, N: c}
	action := "Deliver"
	if crashAt != "" {
		action = "CrashConsumer"
	}
	e := m.record(action, a, fmt.Sprintf("message #%d %s%s", i+1, msg.ID, suffix(crashAt)))
	hit := harness.Failpoint("")
	fp := func(p harness.Failpoint) error {
		if p != crashAt {
			return nil
		}
		hit = p
		m.crash(a)
		return errCrash
	}
	err := m.call(t, a, func(ctx context.Context) error { return m.subj.Handle(ctx, c, msg, fp) })
	if hit != "" {
		m.sum.Crashes.ConsumerReached++
	}
	m.finish(e, err, "acknowledged")
	if crashAt != "" && hit == "" && err == nil {
		e.Result += " (failpoint " + string(crashAt) + " never reached)"
	}
	m.m = model.Deliver(m.m, i, m.delivery(err, hit))
}

// delivery is what the model may assume of a Handle that returned err,
// having crashed at failpoint hit ("" if none).
func (m *machine) delivery(err error, hit harness.Failpoint) model.Delivery {
	switch {
	case err == nil:
		return model.Acked
	case hit == harness.BeforeCommit:
		return model.CrashedBefore
	case hit == harness.AfterCommit:
		return model.CrashedAfter
	case m.subj.Indeterminate(err):
		return model.DeliveryUnknown
	}
	return model.DeliveryRejected
}

func suffix(p harness.Failpoint) string {
	if p == "" {
		return ""
	}
	return ", crash " + string(p)
}
