package loopcheck

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// slowReset is a subject whose first resets run out of time.
type slowReset struct {
	Subject
	late, calls int
	bound       time.Duration
}

func (s *slowReset) Reset(ctx context.Context) error {
	s.calls++
	d, _ := ctx.Deadline()
	s.bound = time.Until(d)
	if s.calls <= s.late {
		return fmt.Errorf("restart replication slot: %w", context.DeadlineExceeded)
	}
	return nil
}

// A reset is the harness's setup: it gets a bound of its own, far past a
// call's, and runs once more if that ran out; a second time out, or any
// other error, is returned.
func TestResetIsRetriedOnce(t *testing.T) {
	s := &slowReset{late: 1}
	c := &check{runner: &runner{subj: s, opts: Options{CallTimeout: 2 * time.Second}}, ctx: context.Background()}
	if err := c.reset(); err != nil || s.calls != 2 {
		t.Fatalf("a reset that ran out once: %v after %d calls", err, s.calls)
	}
	if s.bound < ResetTimeout-time.Second {
		t.Fatalf("reset's bound %v, want %v", s.bound, ResetTimeout)
	}
	s = &slowReset{late: 2}
	c.subj = s
	if err := c.reset(); !errors.Is(err, context.DeadlineExceeded) || s.calls != 2 {
		t.Fatalf("a reset that ran out twice: %v after %d calls", err, s.calls)
	}
}
