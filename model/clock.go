package model

import "time"

// AdvanceClock moves the model's time forward by d (d ≥ 0): leases expire
// and backoffs come due only here.
func AdvanceClock(s State, d time.Duration) State {
	if d < 0 {
		panic("model: clock moves forward only")
	}
	s = s.clone()
	s.Now = s.Now.Add(d)
	return s
}

// Due reports whether a claim at s.Now may take r: PENDING or FAILED and
// available, or PUBLISHING with an expired lease.
func (s State) Due(r Row) bool {
	switch r.Status {
	case Pending, Failed:
		return !r.AvailableAt.After(s.Now)
	case Publishing:
		return !r.ClaimExpiresAt.After(s.Now)
	}
	return false
}

// NextAttemptAt is the earliest next due available_at or lease expiry.
func (s State) NextAttemptAt() (time.Time, bool) {
	var best time.Time
	found := false
	for _, r := range s.Rows {
		var at time.Time
		switch r.Status {
		case Pending, Failed:
			at = r.AvailableAt
		case Publishing:
			at = r.ClaimExpiresAt
		default:
			continue
		}
		if !found || at.Before(best) {
			best, found = at, true
		}
	}
	return best, found
}

// Stats is what an operator sees.
type Stats struct {
	Pending          int
	OldestPendingAge time.Duration
	Failed           int
	Dead             int
}

// ExpectedStats counts the model's rows at s.Now.
func (s State) ExpectedStats() Stats {
	var st Stats
	for _, r := range s.Rows {
		switch {
		case r.Status.Waiting():
			st.Pending++
			if age := s.Now.Sub(r.CreatedAt); age > st.OldestPendingAge {
				st.OldestPendingAge = age
			}
		case r.Status == Dead:
			st.Dead++
		}
		if r.Status == Failed {
			st.Failed++
		}
	}
	return st
}
