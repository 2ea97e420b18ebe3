package harness

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Spent is a kind of wall time a run spends, for Timing.
type Spent int

const (
	SpentCalls     Spent = iota // subject calls of actions that ended before their deadline
	SpentDeadlines              // subject calls that ran into their deadline (a blackhole, a long delay)
	SpentReadBacks              // reading the subject's state back after every step
	SpentSettle                 // cutting an actor's link and waiting until its sessions are gone
	SpentReset                  // Reset and a fresh start, per check
	SpentGate                   // lining up concurrent calls (gate.go)
	SpentDBCrash                // SIGKILL of PostgreSQL, restart and crash recovery
	nSpent

	SpentNone Spent = -1 // counted by the caller, as part of something else
)

var spentNames = [nSpent]string{"calls", "deadlines", "read-backs", "settle", "reset", "gate", "database crash"}

func (s Spent) String() string { return spentNames[s] }

// Timing is where a run's wall time went, shrinking included: the
// measured kinds, and the whole (Total). What is not measured (the
// model, rapid's draws, the history) is Total minus their sum.
type Timing struct {
	mu    sync.Mutex // concurrent calls (ClaimTogether) add from their goroutines
	spent [nSpent]time.Duration
	Total time.Duration
	// Deadlines counts the calls that ran into their deadline, and
	// EndedEarly those of them whose deadline the harness brought forward
	// because a fault of its own held their request.
	Deadlines, EndedEarly int
	// Retried counts the harness's own calls (read-backs, resets, the
	// drain's claims) tried again after a timeout or a lost session: a
	// slow machine's cost, never a verdict.
	Retried int
}

// CountRetry counts a harness call tried again (Retried).
func (t *Timing) CountRetry() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.Retried++
}

// CountDeadline counts a call that ran into its deadline, brought
// forward (early) or not.
func (t *Timing) CountDeadline(early bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.Deadlines++
	if early {
		t.EndedEarly++
	}
}

// Of is the time spent on kind s.
func (t *Timing) Of(s Spent) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.spent[s]
}

// AddSpent adds d to the time spent on s.
func (t *Timing) AddSpent(s Spent, d time.Duration) {
	if s == SpentNone {
		return
	}
	t.mu.Lock()
	t.spent[s] += d
	t.mu.Unlock()
}

// Other is the time no kind measured: the model, rapid, the history.
func (t *Timing) Other() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	o := t.Total
	for _, d := range t.spent {
		o -= d
	}
	return o
}

// String lists every kind with its share of Total.
func (t *Timing) String() string {
	if t.Total <= 0 {
		return ""
	}
	var parts []string
	share := func(name string, d time.Duration) {
		parts = append(parts, fmt.Sprintf("%s %.1fs (%.0f%%)", name, d.Seconds(), 100*d.Seconds()/t.Total.Seconds()))
	}
	for s := range nSpent {
		if d := t.Of(s); d > 0 {
			share(s.String(), d)
		}
		if s == SpentDeadlines && t.Deadlines > 0 && len(parts) > 0 {
			parts[len(parts)-1] += fmt.Sprintf(" [%d calls, %d ended early]", t.Deadlines, t.EndedEarly)
		}
		if s == SpentReadBacks && t.Retried > 0 && len(parts) > 0 {
			parts[len(parts)-1] += fmt.Sprintf(" [%d of the harness's own calls retried]", t.Retried)
		}
	}
	share("model and rapid", t.Other())
	return strings.Join(parts, ", ")
}

// Add adds o's times and counts to t (o may be nil).
func (t *Timing) Add(o *Timing) {
	if o == nil {
		return
	}
	o.mu.Lock()
	spent, total, deadlines, early, retried := o.spent, o.Total, o.Deadlines, o.EndedEarly, o.Retried
	o.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	for s := range spent {
		t.spent[s] += spent[s]
	}
	t.Total += total
	t.Deadlines += deadlines
	t.EndedEarly += early
	t.Retried += retried
}
