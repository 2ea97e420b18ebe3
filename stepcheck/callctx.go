package stepcheck

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// callCtx is a subject call's context: a deadline that the harness may
// bring forward to now once it knows that the call cannot succeed before
// it (a fault it injected holds the call's request). The subject sees
// exactly what it sees when a deadline passes: Done closes and Err is
// context.DeadlineExceeded. Only the wait is shorter.
type callCtx struct {
	parent context.Context
	done   chan struct{}

	mu       sync.Mutex
	deadline time.Time
	err      error
	early    bool   // the deadline was brought forward
	why      string // what the watcher saw, when early
}

// newCallCtx is context.WithTimeout(parent, timeout) with endEarly.
func newCallCtx(parent context.Context, timeout time.Duration) (*callCtx, context.CancelFunc) {
	c := &callCtx{parent: parent, done: make(chan struct{}), deadline: time.Now().Add(timeout)}
	timer := time.AfterFunc(timeout, func() { c.end(context.DeadlineExceeded, false) })
	stop := context.AfterFunc(parent, func() { c.end(parent.Err(), false) })
	return c, func() {
		timer.Stop()
		stop()
		c.end(context.Canceled, false)
	}
}

func (c *callCtx) Deadline() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deadline, true
}

func (c *callCtx) Done() <-chan struct{} { return c.done }

func (c *callCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *callCtx) Value(key any) any { return c.parent.Value(key) }

// endEarly makes the deadline now, if it has not passed.
func (c *callCtx) endEarly() { c.end(context.DeadlineExceeded, true) }

// endEarlyFor is endEarly, saying why: the fault the watcher saw.
func (c *callCtx) endEarlyFor(why string) {
	c.mu.Lock()
	if c.err == nil {
		c.why = why
	}
	c.mu.Unlock()
	c.endEarly()
}

// earlyWhy is what ended the call early ("" if nothing did).
func (c *callCtx) earlyWhy() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.early {
		return ""
	}
	return c.why
}

// endedEarly reports whether endEarly ended the call.
func (c *callCtx) endedEarly() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.early
}

// until is when the deadline is (for a stall: whether the stall outlasts it).
func (c *callCtx) until() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deadline
}

func (c *callCtx) end(err error, early bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err, c.early = err, early
	if early {
		c.deadline = time.Now()
	}
	close(c.done)
}

// watchStalls has the fault net end ctx early while actor a's link holds
// one of its requests, or delays one past ctx's deadline: a call waits
// for the reply to every request it sends, so it cannot succeed before
// its deadline. What the call did stays unknown where it was (a request
// held after the COMMIT went out): only the wait is cut. It returns the
// function that stops watching.
func (m *machine) watchStalls(a harness.Actor, ctx *callCtx) (stop func()) {
	if m.links == nil || m.links.net == nil || a.Role == harness.Operator {
		return func() {}
	}
	stop, err := m.links.net.Watch(a.String(), func(until time.Time) {
		switch {
		case until.IsZero():
			ctx.endEarlyFor("a partition on " + a.String() + "'s link held its request")
		case until.After(ctx.until()):
			ctx.endEarlyFor(fmt.Sprintf("a delay on %s's link forwards its request %v after the call's deadline", a, until.Sub(ctx.until()).Round(time.Millisecond)))
		}
	})
	if err != nil {
		return func() {} // no link yet: nothing of it can stall
	}
	return stop
}
