package model

import "time"

// Policy is the dispatcher's numbers as the model knows them.
type Policy struct {
	Lease       time.Duration
	MaxAttempts int
	BackoffBase time.Duration
	BackoffCap  int
}

// SeedPolicy is the seed's: 1 minute lease, DEAD at 20, 2^min(attempts,10) s.
func SeedPolicy() Policy {
	return Policy{Lease: time.Minute, MaxAttempts: 20, BackoffBase: time.Second, BackoffCap: 10}
}

// Backoff is the wait after a failure at this attempt count.
func (p Policy) Backoff(attempts int) time.Duration {
	return p.BackoffBase * time.Duration(int64(1)<<min(max(attempts, 0), p.BackoffCap))
}

// FailureStatus is where a failure at this attempt count leads.
func (p Policy) FailureStatus(attempts int) Status {
	if attempts >= p.MaxAttempts {
		return Dead
	}
	return Failed
}
