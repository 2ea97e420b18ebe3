package loopcheck

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// CrashLooper is a Subject that declares how long an event whose every
// publish crashes the relay publishing it (a message its serializer or
// client library dies on) may take to end dead. Without it, a subject
// that shows its dead letters is held to MaxAttempts × (Lease + Recovery
// + the harness's restart delay): each crash costs at most a lease and a
// recovery, and a relay that counts an attempt per claim reaches its
// limit. A subject that returns 0 declares that it retries such an event
// for ever: crash-loop is then not applicable, and the report says so.
type CrashLooper interface {
	CrashLoopBound() time.Duration
}

// crashRestart is how long after a crash the harness starts the relay
// again, as a process supervisor does.
const crashRestart = 100 * time.Millisecond

// crashLoopBound is the bound crash-loop holds the subject to; ok is
// false when it does not apply.
func (c *check) crashLoopBound() (d time.Duration, ok bool) {
	if _, shows := capability[DeadLetterer](c.subj); !shows {
		return 0, false
	}
	if cl, declared := capability[CrashLooper](c.subj); declared {
		return cl.CrashLoopBound(), cl.CrashLoopBound() > 0
	}
	return time.Duration(c.opts.MaxAttempts) * (c.opts.Lease + c.opts.Recovery + crashRestart), true
}

// crashLoop commits a payment whose every publish crashes the relay
// publishing it: the publish never reaches the broker nor returns, and
// the harness kills that incarnation (as its process died) and restarts
// it after crashRestart. The payment must end dead within the bound
// (crash-loop): a relay that counts no attempt for a publish it died in,
// or gives up only on a failed publish, claims it for ever. A payment no
// relay publishes again for a recovery, a restart and a lease after its
// last crash is not looping: the step ends there, and whatever became of
// it (a relay that lost it when it died) the end state judges. Afterwards the payment stays
// poison for ever (refused, no longer crashing).
func (c *check) crashLoop() *harness.Failure {
	bound, ok := c.crashLoopBound()
	if !ok { // not counted as injected: the coverage says not applicable
		c.record("CrashLoop", "operator", "", "not applicable: the subject shows no dead letters, or declares that it retries an event that crashes it for ever (CrashLooper)")
		return nil
	}
	pay := fmt.Sprintf("pay-%d", c.pays+1)
	caught := c.bro.setKiller(pay)
	c.produce(true)
	restarts := map[int]time.Time{}
	crashes, lastCrash := 0, time.Time{}
	defer func() { c.endCrashLoop(pay, restarts) }()
	why := ""
	switch {
	case !c.paid[pay]:
		why = "its commit failed"
	case !c.healthyRelay(-1):
		why = "no relay runs on a healthy link"
	}
	if why != "" {
		c.record("CrashLoop", "broker", pay+": every publish of its event crashes the relay publishing it", "not judged: "+why)
		return nil
	}
	c.record("CrashLoop", "broker", pay+": every publish of its event crashes the relay publishing it", "")
	start, harnessTime := time.Now(), time.Duration(0) // the harness's own kills and restarts do not count against the subject
	// quiet is how long after its last crash a payment no relay publishes
	// again is not looping: a recovery, the restart delay and a lease.
	quiet := c.opts.Recovery + crashRestart + c.opts.Lease
	notLooping := func() *harness.Failure {
		c.record("CrashLoop", "operator", pay, fmt.Sprintf("after %d crashes, not published again for %v (a recovery, a restart and a lease): not looping; the end state judges it",
			crashes, time.Since(lastCrash).Round(time.Millisecond)))
		return nil
	}
	for lastRead := (time.Time{}); time.Since(start)-harnessTime <= bound; {
		select {
		case got := <-caught:
			t := time.Now()
			if c.crash(got) {
				crashes++
				lastCrash = time.Now()
				restarts[got.index] = time.Now().Add(crashRestart)
			}
			harnessTime += time.Since(t)
		case <-time.After(10 * time.Millisecond):
		}
		t := time.Now()
		c.restartDue(restarts, false)
		harnessTime += time.Since(t)
		if time.Since(lastRead) >= 100*time.Millisecond {
			lastRead = time.Now()
			switch c.crashLoopState(pay) {
			case "dead":
				c.judged.step("crash-loop")
				c.record("CrashLoop", "operator", pay, fmt.Sprintf("dead after %d crashes, %v after its commit", crashes, time.Since(start).Round(time.Millisecond)))
				return nil
			case "gone":
				c.record("CrashLoop", "operator", pay, fmt.Sprintf("after %d crashes, neither pending nor dead: no-loss judges it at the end", crashes))
				return nil
			}
			if crashes > 0 && len(restarts) == 0 && time.Since(lastCrash) > quiet {
				return notLooping()
			}
		}
		if c.abandoned() {
			return nil
		}
	}
	if crashes == 0 {
		// An outbox that publishes nothing now, crash or not, is
		// timely-delivery's to judge, not this property's.
		c.record("CrashLoop", "operator", pay, fmt.Sprintf("not judged: no relay published it within %v", bound))
		return nil
	}
	if time.Since(lastCrash) > quiet {
		// Not claimed again: no crash loop, whatever became of it (a
		// relay that lost it when it died). The end state judges it.
		return notLooping()
	}
	c.judged.step("crash-loop")
	c.record("CrashLoop", "operator", pay, fmt.Sprintf("not dead within %v, after %d crashes", bound, crashes))
	return c.fail("crash-loop", fmt.Sprintf("payment %s, whose every publish crashed the relay publishing it, was not dead within %v, after %d crashes (MaxAttempts %d; a relay ran on a healthy link): an event that kills its relay is claimed again past the attempt limit, not given up on",
		pay, bound, crashes, c.opts.MaxAttempts))
}

// crash kills the incarnation whose publish got crashed, if it is still
// the one running; it says whether it was.
func (c *check) crash(got heldPublish) bool {
	rl := c.relays[got.index]
	if rl == nil || rl.pub.relay != got.relay {
		return false
	}
	c.dispatcherFaults++
	at := c.record("Crashed", dispatcher(got.index).String(), fmt.Sprintf("%s, publishing %s of %s", got.relay, got.msg.ID, got.msg.AggregateID), "")
	c.killInto(got.index, at, "its event crashed it: ")
	return true
}

// restartDue restarts the dispatchers whose crash restart is due (all of
// them, if now), in index order.
func (c *check) restartDue(restarts map[int]time.Time, now bool) {
	for _, i := range slices.Sorted(maps.Keys(restarts)) {
		if now || !time.Now().Before(restarts[i]) {
			if now {
				time.Sleep(time.Until(restarts[i]))
			}
			c.restart(i)
			delete(restarts, i)
		}
	}
}

// endCrashLoop ends pay's crashes: the publishes caught and not yet
// served crash their relays, every relay the step crashed runs again,
// and pay stays poison for ever.
func (c *check) endCrashLoop(pay string, restarts map[int]time.Time) {
	for _, got := range c.bro.endKiller(pay) {
		if c.crash(got) {
			restarts[got.index] = time.Now().Add(crashRestart)
		}
	}
	c.restartDue(restarts, true)
	c.bro.setPoison(pay, forever)
}

// crashLoopState says where pay is: "dead" (in the subject's dead
// letters), "gone" (the subject lists pending events, and it is in
// neither: it left the outbox unseen, no-loss's to judge) or "" (still
// pending, or unread: the next reading decides).
func (c *check) crashLoopState(pay string) string {
	d, ok := capability[DeadLetterer](c.subj)
	if !ok {
		return ""
	}
	var dead, pending []string
	err := c.call(func(ctx context.Context) (err error) {
		if dead, err = d.DeadLetters(ctx); err != nil {
			return err
		}
		if p, ok := capability[Pender](c.subj); ok {
			pending, err = p.Pending(ctx)
			return err
		}
		pending = []string{pay}
		return nil
	})
	c.noteFault(err)
	switch {
	case err != nil:
		return ""
	case slices.Contains(dead, pay):
		return "dead"
	case !slices.Contains(pending, pay):
		return "gone"
	}
	return ""
}

// setKiller makes every live publish of pay's event crash its relay from
// now on; the crashed publishes are announced on the channel returned.
func (b *broker) setKiller(pay string) chan heldPublish {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.killers == nil {
		b.killers = map[string]chan heldPublish{}
	}
	ch := make(chan heldPublish, 64)
	b.killers[pay] = ch
	b.cast(&spell{kind: "crash-loop", pay: pay})
	return ch
}

// endKiller ends pay's crashes and returns the crashed publishes not yet
// taken from its channel.
func (b *broker) endKiller(pay string) []heldPublish {
	b.mu.Lock()
	ch := b.killers[pay]
	delete(b.killers, pay)
	b.mu.Unlock()
	var out []heldPublish
	for {
		select {
		case got := <-ch:
			out = append(out, got)
		default:
			return out
		}
	}
}

// crashes says whether m's publish by p crashes it: if so, the attempt
// is recorded and announced (under the broker's lock, so endKiller sees
// every one).
func (b *broker) crashes(p *publisher, m harness.Message) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	ch, ok := b.killers[m.AggregateID]
	if !ok {
		return false
	}
	b.attempts = append(b.attempts, Attempt{EventID: m.ID, PaymentID: m.AggregateID, At: time.Since(b.start), Relay: p.relay, Outcome: "crashed"})
	b.hitLatest("crash-loop", m.AggregateID)
	select {
	case ch <- heldPublish{relay: p.relay, index: p.index, msg: m}:
	default: // 64 crashes unserved: the step is long over its bound
	}
	return true
}
