package gate

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// progress reports a run as it goes: on a terminal one line rewritten in
// place every second, otherwise a plain line every 10 seconds.
type progress struct {
	w        io.Writer
	tty      bool
	total    int
	deadline time.Time
	onCheck  func(*harness.History)

	mu      sync.Mutex
	checks  int
	shrinks int
	steps   int
	faults  int
	begin   time.Time
	done    chan struct{}
	wg      sync.WaitGroup
}

// newProgress reports to w; onCheck, if set, sees every check too.
func newProgress(w io.Writer, total int, deadline time.Time, onCheck func(*harness.History)) *progress {
	return &progress{w: w, total: total, deadline: deadline, onCheck: onCheck, tty: terminal(w)}
}

// terminal reports whether w is a terminal, looking through writers that
// wrap another (an Unwrap() io.Writer method).
func terminal(w io.Writer) bool {
	for {
		switch v := w.(type) {
		case *os.File:
			st, err := v.Stat()
			return err == nil && st.Mode()&os.ModeCharDevice != 0
		case interface{ Unwrap() io.Writer }:
			w = v.Unwrap()
		default:
			return false
		}
	}
}

// check is Options.OnCheck.
func (p *progress) check(h *harness.History) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.onCheck != nil {
		p.onCheck(h)
	}
	if h.Shrinking {
		p.shrinks++
		return
	}
	p.checks++
	p.steps += len(h.Entries)
	for _, e := range h.Entries {
		if faultActions[e.Action] {
			p.faults++
		}
	}
}

func (p *progress) start() {
	p.begin = time.Now()
	p.done = make(chan struct{})
	every := 10 * time.Second
	if p.tty {
		every = time.Second
	}
	p.wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				if p.tty {
					fmt.Fprint(p.w, "\r\033[K")
				}
				return
			case <-t.C:
				p.print()
			}
		}
	})
}

func (p *progress) stop() {
	close(p.done)
	p.wg.Wait()
}

func (p *progress) print() {
	p.mu.Lock()
	checks, shrinks, steps, faults := p.checks, p.shrinks, p.steps, p.faults
	p.mu.Unlock()
	el := time.Since(p.begin)
	line := fmt.Sprintf("checks %d", checks)
	if p.deadline.IsZero() {
		line += fmt.Sprintf("/%d", p.total)
	}
	if shrinks > 0 {
		line = fmt.Sprintf("shrinking a failure found after %d checks ran · %d replays · %s elapsed", checks, shrinks, el.Round(time.Second))
	} else {
		line += fmt.Sprintf(" · %.0f steps/s · %d faults injected · %s elapsed", float64(steps)/el.Seconds(), faults, el.Round(time.Second))
	}
	switch {
	case !p.deadline.IsZero() && shrinks == 0: // shrinking has its own budget
		line += fmt.Sprintf(" · %s left", max(0, time.Until(p.deadline)).Round(time.Second))
	case shrinks == 0 && checks > 0 && checks < p.total:
		eta := time.Duration(float64(el) / float64(checks) * float64(p.total-checks))
		line += fmt.Sprintf(" · ETA %s", eta.Round(time.Second))
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintf(p.w, "outboxcheck: %s\n", line)
	}
}

// faultActions are the story's actions that are faults, on either
// contract.
var faultActions = map[string]bool{"Partition": true, "CrashMidMark": true, "CrashDatabase": true,
	"CrashDispatcher": true, "StopDispatcher": true, "BrokerDown": true, "BrokerSlow": true, "AckLost": true,
	"Poison": true, "CrashConsumer": true, "HoldTransaction": true, "Wedge": true}
