package stepcheck

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/outboxcheck/outboxcheck/harness"
)

// calls counts a run's subject calls per operation (a Subject method):
// those that returned, and those that failed with an error of the
// subject's own (ownError), the first of which it keeps with where it
// happened. It is safe for concurrent use.
type calls struct {
	mu    sync.Mutex
	ops   map[string]*opCalls
	order []string // operations in the order of their first own failure
}

// opCalls is one operation's count.
type opCalls struct {
	ok    int
	own   int // failures with errors of its own
	other int // failures a fault or the run explains
	// failed counts the failures the harness did not cause on purpose
	// (a refused publish, a consumer crashed at its failpoint), and
	// firstFailed is the first of them, own or not.
	failed      int
	firstFailed error
	first       error            // its first own failure; nil if none
	where       string           // where that happened, in words
	hist        *harness.History // the check it happened in, up to its step upto
	upto        int
}

// add counts a call of op that returned err; own says err is the
// subject's own doing, and at says where the run stands: in words, and
// as the check's history and how many of its steps have begun (called
// only for a first own failure).
func (c *calls) add(op string, err error, own, induced bool, at func() (string, *harness.History, int)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ops == nil {
		c.ops = map[string]*opCalls{}
	}
	o := c.ops[op]
	if o == nil {
		o = &opCalls{}
		c.ops[op] = o
	}
	if err != nil && !induced {
		if o.failed++; o.firstFailed == nil {
			o.firstFailed = err
		}
	}
	switch {
	case err == nil:
		o.ok++
	case !own:
		o.other++
	default:
		o.own++
		if o.first == nil {
			o.first = err
			o.where, o.hist, o.upto = at()
			c.order = append(c.order, op)
		}
	}
}

// evidence is how much it takes to call an operation broken: failures of
// its own, at least Own of them and PerOther for each failure something
// else explains.
type evidence struct{ Own, PerOther int }

// broken lists the operations that never once returned and failed with
// errors of their own as often as e asks, in the order of their first
// failure.
func (c *calls) broken(e evidence) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(c.order), func(op string) bool {
		o := c.ops[op]
		return o.ok > 0 || o.own < e.Own || o.own < e.PerOther*o.other
	})
}

// failure is the subject's failure for its broken operations (at least
// one): the first of them, with its first error and the story of the
// check up to it.
func (c *calls) failure(broken []string) harness.Failure {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.ops[broken[0]]
	msg := fmt.Sprintf("%s never succeeded: every call failed; the first, %s: %v", broken[0], o.where, o.first)
	if len(broken) > 1 {
		msg += fmt.Sprintf(" (nor did %s)", strings.Join(broken[1:], ", "))
	}
	f := harness.Failure{SubjectError: true, Operation: broken[0], Message: msg}
	if o.hist != nil && o.upto > 0 {
		f.History = &harness.History{Entries: slices.Clone(o.hist.Entries[:o.upto])}
	}
	return f
}
