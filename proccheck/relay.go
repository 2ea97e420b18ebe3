package proccheck

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"syscall"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
)

// Dispatch starts relay i's process and answers its publishes through
// pub, each as the broker answers it, until ctx ends (the process group
// is then killed: SIGKILL) or the process exits (its error, with the last
// of its stderr).
func (s *subject) Dispatch(ctx context.Context, i int, pub harness.Publisher) error {
	c, err := s.spawn(ctx, "relay", harness.Actor{Role: harness.Dispatcher, N: i}, []string{"OUTBOXCHECK_RELAY=" + strconv.Itoa(i)})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	s.mu.Lock()
	s.relays[i] = c
	s.mu.Unlock()
	var wg sync.WaitGroup
	defer func() {
		c.kill()
		wg.Wait()
		s.mu.Lock()
		if s.relays[i] == c {
			delete(s.relays, i)
		}
		s.mu.Unlock()
	}()
	inflight := &publishes{cancel: map[int64]context.CancelFunc{}}
	for {
		line, err := c.next(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil && c.stopping.Load() && !c.alive():
			return nil // it stopped as asked
		case err != nil:
			return err
		}
		var p publish
		err = jsonStrict(line, &p)
		switch {
		case err == nil && p.Op == "abandon" && p.ID != nil:
			inflight.abandon(*p.ID)
			continue
		case err == nil && p.Op == "claimed" && p.Event != "" && p.Claim != "" && p.Changed == nil:
			if cl, ok := pub.(loopcheck.ClaimLog); ok {
				cl.Claimed(p.Event, p.Claim, p.Over)
			}
			continue
		case err == nil && p.Op == "completed" && p.Event != "" && p.Claim != "" && p.Changed != nil && p.Over == "":
			if cl, ok := pub.(loopcheck.ClaimLog); ok {
				cl.Completed(p.Event, p.Claim, *p.Changed)
			}
			continue
		case err == nil && (p.Op == "claimed" || p.Op == "completed"):
			return c.broke("a "+p.Op+" report without its fields (claimed: event, claim and perhaps over; completed: event, claim and changed)", string(line))
		case err != nil || p.Op != "publish" || p.ID == nil || p.Message == nil:
			why := "not a publish, abandon or report"
			if err != nil {
				why += ": " + err.Error()
			}
			return c.broke(why, string(line))
		}
		id, m := *p.ID, p.Message.Harness()
		pctx := inflight.start(ctx, id)
		wg.Go(func() {
			defer inflight.end(id)
			res := published{ID: id, Result: "accepted"}
			if err := pub.Publish(pctx, m); err != nil {
				res.Result, res.Error = "error", err.Error()
				if errors.Is(err, harness.ErrRefused) {
					res.Result = "refused"
				}
			}
			if ctx.Err() == nil {
				_ = c.send(res)
			}
		})
	}
}

// publishes are a relay's publishes in flight, to give up on one it
// abandons.
type publishes struct {
	mu     sync.Mutex
	cancel map[int64]context.CancelFunc
}

func (p *publishes) start(ctx context.Context, id int64) context.Context {
	pctx, cancel := context.WithCancel(ctx)
	p.mu.Lock()
	p.cancel[id] = cancel
	p.mu.Unlock()
	return pctx
}

func (p *publishes) end(id int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cancel, ok := p.cancel[id]; ok {
		cancel()
		delete(p.cancel, id)
	}
}

// abandon gives up on publish id, if it is still in flight.
func (p *publishes) abandon(id int64) { p.end(id) }

// Pause freezes relay i's process group whole (SIGSTOP).
func (s *subject) Pause(i int) error { return s.signalRelay(i, syscall.SIGSTOP) }

// Resume thaws it (SIGCONT).
func (s *subject) Resume(i int) error { return s.signalRelay(i, syscall.SIGCONT) }

func (s *subject) signalRelay(i int, sig syscall.Signal) error {
	s.mu.Lock()
	c := s.relays[i]
	s.mu.Unlock()
	if c == nil {
		return errNotRunning
	}
	c.signal(sig)
	return nil
}

// Stop asks relay i's process to stop (SIGTERM): it should finish or hand
// back what it holds and exit; the loop contract kills it if it does not.
func (s *subject) Stop(_ context.Context, i int) error {
	s.mu.Lock()
	c := s.relays[i]
	s.mu.Unlock()
	if c == nil {
		return errNotRunning
	}
	c.stopping.Store(true)
	c.signal(syscall.SIGTERM)
	return nil
}
