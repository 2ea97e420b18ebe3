package loopcheck

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// returnTimeout is how long the harness waits for a killed Dispatch to
// return before it says so in the story (the contract asks it to return
// soon after its context is done).
const returnTimeout = 5 * time.Second

// relay is one incarnation of a dispatcher's loop.
type relay struct {
	// asked: the harness has begun to kill or stop it, so a return from
	// here on is no relay quitting on its own.
	asked  atomic.Bool
	cancel context.CancelFunc
	pub    *publisher
	done   chan struct{} // closed when Dispatch returned
}

// returned says whether Dispatch has returned.
func (rl *relay) returned() bool {
	select {
	case <-rl.done:
		return true
	default:
		return false
	}
}

// startRelay starts a new incarnation of dispatcher i, with a publisher of
// its own.
func (c *check) startRelay(i int) {
	ctx, cancel := context.WithCancel(c.ctx)
	if c.incarnations == nil {
		c.incarnations = map[int]int{}
	}
	c.incarnations[i]++
	name := relayName(i, c.incarnations[i])
	pub := &publisher{b: c.bro, relay: name, index: i, gone: make(chan struct{}), onDead: func(m harness.Message) {
		c.tally.zombie()
		c.record("ZombiePublish", dispatcher(i).String(), name+": "+m.ID+" of "+m.AggregateID, "refused: this incarnation was killed")
	}, real: c.realPublisher(name)}
	rl := &relay{cancel: cancel, pub: pub, done: make(chan struct{})}
	go func() {
		defer close(rl.done)
		err := dispatchGuarded(ctx, c.subj, i, pub)
		if ctx.Err() == nil && !rl.asked.Load() && !c.noteFault(err) { // nobody stopped it: the relay ended on its own
			c.tally.quit()
			c.relayQuit(name, err)
			c.record("DispatchReturned", dispatcher(i).String(), name, result(err, "returned nil")+"; not killed: this relay no longer runs")
		}
	}()
	c.relays[i] = rl
}

// dispatchGuarded runs the subject's Dispatch; a panic in it (which
// would end the whole run, the harness's process included) is returned
// as its error: the relay ended on its own, with the panic's message
// and where it came from.
func dispatchGuarded(ctx context.Context, subj Subject, i int, pub harness.Publisher) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("Dispatch panicked: %v\n%s", r, debug.Stack())
		}
	}()
	return subj.Dispatch(ctx, i, pub)
}

// kill ends dispatcher i's incarnation as a crash would: its publisher
// refuses every later publish, its link drops every connection and refuses
// new ones until restart, the server ends its sessions, and its context is
// cancelled. inStory records it (shutdown does not). It says whether
// there was a running incarnation to kill.
func (c *check) kill(i int, inStory bool) bool {
	rl := c.relays[i]
	if rl == nil {
		if inStory {
			c.record("CrashDispatcher", dispatcher(i).String(), "", "skipped: not running (nothing to kill)")
		}
		return false
	}
	at := -1
	if inStory {
		c.tally.kill()
		at = c.record("CrashDispatcher", dispatcher(i).String(), rl.pub.relay, "")
	}
	c.killInto(i, at, "")
	return true
}

// killInto kills dispatcher i's running incarnation and sets story entry
// at's result (if at is one) to what came of it, after prefix.
func (c *check) killInto(i, at int, prefix string) {
	rl := c.relays[i]
	rl.asked.Store(true)
	c.relays[i] = nil
	c.disturb("", true)
	rl.pub.kill()
	err := c.net.Down(dispatcher(i).String())
	rl.cancel()
	n, terr := c.terminate(dispatcher(i))
	rl.pub.buried()
	res := fmt.Sprintf("publisher revoked, link down, %s ended", sessions(n))
	if err = errors.Join(err, terr); err != nil {
		res += "; error: " + err.Error()
	}
	c.setResult(at, prefix+res)
	select {
	case <-rl.done:
	case <-time.After(returnTimeout):
		c.record("Dispatch", dispatcher(i).String(), rl.pub.relay, fmt.Sprintf("did not return within %v of its kill (the contract asks it to)", returnTimeout))
		c.lingering = append(c.lingering, rl)
	}
}

// awaitLingering gives the incarnations that outlived their kill one more
// bound to return; it says which never did.
func (c *check) awaitLingering() {
	for _, rl := range c.lingering {
		select {
		case <-rl.done:
		case <-time.After(2 * returnTimeout):
			c.tally.stuck()
		}
	}
	c.lingering = nil
}

// restart brings dispatcher i's link up and starts a new incarnation.
func (c *check) restart(i int) {
	if rl := c.relays[i]; rl != nil {
		c.record("Restart", dispatcher(i).String(), rl.pub.relay, "skipped: already running")
		return
	}
	res := ""
	if err := c.net.Up(dispatcher(i).String()); err != nil {
		res = "error: " + err.Error()
	}
	c.startRelay(i)
	c.record("Restart", dispatcher(i).String(), c.relays[i].pub.relay, res)
}

// terminate ends every server session of actor a, by its
// application_name: the harness does this itself rather than leave it to
// server-wide timeouts, which would hide a subject's own stuck sessions.
func (c *check) terminate(a harness.Actor) (int, error) {
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.CallTimeout)
	defer cancel()
	return pgscratch.TerminateSessions(ctx, c.admin, appName(a))
}

// stop ends dispatcher i's incarnation as its own shutdown would: its
// context is cancelled, and it may finish what it was doing (its link
// and its publisher stay good) until Dispatch returns. Only then is its
// publisher revoked, so a publish after its return is a zombie's. One
// that does not return within returnTimeout is killed. It says whether
// there was a running incarnation, and whether it had to be killed.
func (c *check) stop(i int) (running, killed bool) { return c.stopThen(i, nil) }

// stopThen is stop, calling then (if set) once the stop is asked and
// before waiting for Dispatch to return: stop-mid-batch lets the publish
// it holds go on there.
func (c *check) stopThen(i int, then func()) (running, killed bool) {
	rl := c.relays[i]
	if rl == nil {
		c.record("StopDispatcher", dispatcher(i).String(), "", "skipped: not running (nothing to stop)")
		return false, false
	}
	rl.asked.Store(true)
	c.disturb("", true)
	at := c.record("StopDispatcher", dispatcher(i).String(), rl.pub.relay, "")
	start := time.Now()
	if st, ok := capability[Stopper](c.subj); ok {
		// The library's own stop, its context alive: what it flushes
		// or acks on the way out must come out right.
		if err := c.call(func(ctx context.Context) error { return st.Stop(ctx, i) }); err != nil {
			c.setResult(at, "its Stop failed ("+err.Error()+"): its context cancelled")
			rl.cancel()
		}
	} else {
		rl.cancel()
	}
	if then != nil {
		then()
	}
	select {
	case <-rl.done:
		rl.pub.kill()
		c.relays[i] = nil
		c.tally.stop()
		how := "returned"
		if _, ok := capability[Stopper](c.subj); ok {
			how = "stopped by its Stop, returned"
		}
		c.setResult(at, fmt.Sprintf("%s after %v", how, time.Since(start).Round(10*time.Microsecond)))
	case <-time.After(returnTimeout):
		c.setResult(at, fmt.Sprintf("did not return within %v of its stop: killed", returnTimeout))
		c.kill(i, true)
		return true, true
	}
	return true, false
}

// sessions counts database sessions in words: "1 session", "2 sessions".
func sessions(n int) string {
	if n == 1 {
		return "1 session"
	}
	return fmt.Sprintf("%d sessions", n)
}
