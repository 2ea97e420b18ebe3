package proccheck

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"syscall"

	"github.com/outboxcheck/outboxcheck/harness"
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
		if err := jsonStrict(line, &p); err != nil || p.Op != "publish" || p.ID == nil || p.Message == nil {
			why := "not a publish"
			if err != nil {
				why += ": " + err.Error()
			}
			return c.broke(why, string(line))
		}
		id, m := *p.ID, p.Message.harness()
		wg.Go(func() {
			res := published{ID: id, Result: "accepted"}
			if err := pub.Publish(ctx, m); err != nil {
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
