package impl

import (
	"fmt"
	"time"
)

// Policy holds the dispatcher's numbers. The seed's case choices are the
// defaults (DefaultPolicy); the harness needs them configurable.
type Policy struct {
	Lease       time.Duration // how long a claim holds an event
	MaxAttempts int           // a failure at this many attempts is DEAD
	BackoffBase time.Duration // first term of the backoff: base * 2^min(attempts, cap)
	BackoffCap  int           // largest exponent
}

// DefaultPolicy is the seed's: a 1 minute lease, DEAD at 20 attempts, and a
// backoff of 2^min(attempts,10) seconds.
func DefaultPolicy() Policy {
	return Policy{Lease: time.Minute, MaxAttempts: 20, BackoffBase: time.Second, BackoffCap: 10}
}

// Validate reports the first nonsensical number.
func (p Policy) Validate() error {
	switch {
	case p.Lease <= 0:
		return fmt.Errorf("policy: lease must be positive, got %v", p.Lease)
	case p.MaxAttempts < 1:
		return fmt.Errorf("policy: max attempts must be at least 1, got %d", p.MaxAttempts)
	case p.BackoffBase <= 0:
		return fmt.Errorf("policy: backoff base must be positive, got %v", p.BackoffBase)
	case p.BackoffCap < 0 || p.BackoffCap > 30:
		return fmt.Errorf("policy: backoff cap must be in 0..30, got %d", p.BackoffCap)
	}
	return nil
}

// Backoff is the wait after a failure at the given attempt count (which
// already counts the claim that failed, so the first failure waits 2 s).
func (p Policy) Backoff(attempts int) time.Duration {
	return p.BackoffBase * time.Duration(int64(1)<<min(max(attempts, 0), p.BackoffCap))
}

// FailureStatus is the status a failure at this attempt count leads to.
func (p Policy) FailureStatus(attempts int) Status {
	if attempts >= p.MaxAttempts {
		return StatusDead
	}
	return StatusFailed
}

// Clock tells the time. The dispatcher never calls time.Now itself.
type Clock interface{ Now() time.Time }

// ClockFunc adapts a function to Clock.
type ClockFunc func() time.Time

func (f ClockFunc) Now() time.Time { return f() }

// IDs makes identifiers for events and claims. Injected so that a harness
// can make them deterministic.
type IDs interface{ NewID() string }

// IDFunc adapts a function to IDs.
type IDFunc func() string

func (f IDFunc) NewID() string { return f() }
