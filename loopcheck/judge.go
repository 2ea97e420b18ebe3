package loopcheck

import (
	"github.com/outboxcheck/outboxcheck/harness"

	"context"
	"fmt"
	"time"
)

// Outcome is what became of one committed payment (docs/adapters.md).
type Outcome string

const (
	Delivered Outcome = "delivered" // one effect
	Dead      Outcome = "dead"      // the subject gave up on it and shows it
	Pending   Outcome = "pending"   // still in the subject's outbox
	Lost      Outcome = "lost"      // none of these
)

// endState is one reading of the subject after healing.
type endState struct {
	fx   map[string]int  // event_id → effects
	dead map[string]bool // payments the subject shows as dead; nil: it shows none
	// deadTwice counts the payments the subject lists as dead more than
	// once: each was dead-lettered twice.
	deadTwice map[string]int
	pending   map[string]bool // payments still in its outbox; nil: it lists none
	carried   map[string]bool // payments the broker carried
	msgs      int
	tries     map[string]int // publish attempts per payment, by live relays
}

// progress is what must move while the subject recovers: effects, dead
// letters, pending events fewer, messages carried, publish attempts.
type progress struct{ effects, dead, pending, msgs, tries int }

func (e endState) progress() progress {
	n := 0
	for _, v := range e.fx {
		n += v
	}
	tries := 0
	for _, v := range e.tries {
		tries += v
	}
	return progress{n, len(e.dead), len(e.pending), e.msgs, tries}
}

// read takes one reading: effects, dead letters and pending events where
// the subject shows them, and the broker's log.
func (c *check) read() (endState, error) {
	var e endState
	err := c.call(func(ctx context.Context) (err error) {
		if e.fx, err = c.subj.Effects(ctx); err != nil {
			return err
		}
		if d, ok := capability[DeadLetterer](c.subj); ok {
			var ids []string
			if ids, err = d.DeadLetters(ctx); err != nil {
				return fmt.Errorf("dead letters: %w", err)
			}
			e.dead, _ = setOf(ids, nil)
			e.deadTwice = repeated(ids)
		}
		if p, ok := capability[Pender](c.subj); ok {
			if e.pending, err = setOf(p.Pending(ctx)); err != nil {
				return fmt.Errorf("pending: %w", err)
			}
		}
		return nil
	})
	c.noteFault(err)
	if ferr := c.bro.fetch(); ferr != nil && err == nil {
		err = fmt.Errorf("the broker's stream: %w", ferr) // not judged on a log read in part
	}
	msgs := c.bro.messages()
	e.tries = c.bro.tries()
	e.msgs, e.carried = len(msgs), map[string]bool{}
	for _, m := range msgs {
		e.carried[m.AggregateID] = true
	}
	return e, err
}

// repeated counts the ids that occur more than once in ids.
func repeated(ids []string) map[string]int {
	n, out := map[string]int{}, map[string]int{}
	for _, id := range ids {
		if n[id]++; n[id] > 1 {
			out[id] = n[id]
		}
	}
	return out
}

func setOf(ids []string, err error) (map[string]bool, error) {
	s := map[string]bool{}
	for _, id := range ids {
		s[id] = true
	}
	return s, err
}

// outcomes says what became of every committed payment.
func (c *check) outcomes(e endState) map[string]Outcome {
	perPay := c.perPayment(e)
	out := map[string]Outcome{}
	for pay := range c.paid {
		switch {
		case perPay[pay] > 0:
			out[pay] = Delivered
		case e.dead[pay]:
			out[pay] = Dead
		case e.pending[pay]:
			out[pay] = Pending
		default:
			out[pay] = Lost
		}
	}
	return out
}

// perPayment counts effects per payment, through the events the broker
// carried.
func (c *check) perPayment(e endState) map[string]int {
	payOf := map[string]string{}
	for _, m := range c.bro.messages() {
		payOf[m.ID] = m.AggregateID
	}
	perPay := map[string]int{}
	for id, n := range e.fx {
		perPay[payOf[id]] += n
	}
	return perPay
}

// quiesce waits after healing while the subject makes progress, at most
// Recovery without any and HardBound in all, then judges the end state.
func (c *check) quiesce() (*harness.Failure, error) {
	healed := time.Now()
	hard, idle := healed.Add(c.opts.HardBound()), healed.Add(c.opts.Recovery)
	// A late ack the harness holds back past its own slowest (one aimed
	// at a long deadline the subject declared) moves the hard bound too,
	// given out before healing or after it (the first publish of a
	// payment committed into a slow window, whenever it comes).
	extend := func() {
		if busy := c.bro.busyUntil().Add(c.opts.HardBound() - maxSlowDelay); busy.After(hard) {
			hard = busy
		}
		c.hardBound = hard.Sub(healed)
	}
	extend()
	var (
		last    progress
		e       endState
		have    bool
		lastErr error
		gone    int // readings in a row with nothing pending and something lost
		// settledAt is when every payment was first seen delivered or
		// dead, with a dead one among them: the judge reads on for a
		// lease, so that a second dead letter of the same event (a stale
		// relay's) is seen.
		settledAt time.Time
	)
	for {
		cur, err := c.read()
		if f := c.faulted(); f != nil {
			return f, nil
		}
		if err == nil {
			e, have, c.judged.endRead = cur, true, true
			if f := c.safety(cur); f != nil {
				return f, nil
			}
			if c.settled(cur) {
				if settledAt.IsZero() {
					settledAt = time.Now()
				}
				if len(cur.dead) == 0 || time.Since(settledAt) >= c.opts.Lease {
					c.judged.atEnd("no-loss", 1)
					c.judged.atEnd("timely-delivery", 1)
					return nil, nil
				}
			} else {
				settledAt = time.Time{}
			}
			if p := cur.progress(); p != last {
				last, idle, gone = p, time.Now().Add(c.opts.Recovery), 0
			}
			if gone = gone + 1; c.beyondRecovery(cur) && gone >= goneReadings {
				break
			}
		} else {
			lastErr = err
		}
		// A late ack the harness itself holds back is no stall of the
		// subject's: the idle bound starts after it.
		if busy := c.bro.busyUntil().Add(c.opts.Recovery); busy.After(idle) {
			idle = busy
		}
		extend()
		if now := time.Now(); now.After(hard) || now.After(idle) {
			break
		}
		if c.abandoned() {
			return nil, errInterrupted
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !have {
		return nil, fmt.Errorf("read the end state after healing: %w", lastErr)
	}
	return c.liveness(e, time.Since(healed)), nil
}

// goneReadings is how many unchanged readings in a row make a lost
// payment final (see beyondRecovery).
const goneReadings = 4

// beyondRecovery: the subject lists its pending events, and every
// payment not delivered or dead is in none of its places, nor carried by
// the broker. A correct outbox of any design removes an event only after
// the broker carried it or it went dead, so nothing can bring these back:
// waiting out Recovery would only slow every failing run (and shrinking).
func (c *check) beyondRecovery(e endState) bool {
	if e.pending == nil {
		return false
	}
	for pay, o := range c.outcomes(e) {
		if o == Pending || o == Lost && e.carried[pay] {
			return false
		}
	}
	return true
}

// settled: every committed payment is delivered or dead.
func (c *check) settled(e endState) bool {
	for _, o := range c.outcomes(e) {
		if o != Delivered && o != Dead {
			return false
		}
	}
	return true
}
