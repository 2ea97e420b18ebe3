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
// available, or PUBLISHING with an expired lease where the claim query
// takes those back (not where a rescuer does).
func (s State) Due(r Row) bool {
	if _, held := s.Held[r.ID]; held {
		return false
	}
	switch r.Status {
	case Pending, Failed:
		return s.Sem.reached(DueEdge, r.AvailableAt, s.Now)
	case Publishing:
		return s.Sem.Rescue == nil && s.Expired(r)
	}
	return false
}

// Expired reports whether r is PUBLISHING with its lease over at s.Now.
func (s State) Expired(r Row) bool {
	return r.Status == Publishing && s.Sem.reached(ExpiryEdge, r.ClaimExpiresAt, s.Now)
}

// NextAttemptAt is the earliest next due available_at or lease expiry
// (where a rescuer takes leases back: when it may).
func (s State) NextAttemptAt() (time.Time, bool) {
	return s.deadline(false)
}

// LastDeadline is the latest instant at which a waiting row comes due
// (the late end of a jittered backoff) or a lease ends: once the clock is
// past it, nothing waits on time.
func (s State) LastDeadline() (time.Time, bool) {
	return s.deadline(true)
}

// deadline is the earliest (last: the latest) instant a row waits for:
// when it comes due (the late end of a jittered backoff, for the latest)
// or when its lease ends.
func (s State) deadline(last bool) (time.Time, bool) {
	var best time.Time
	found := false
	for _, r := range s.Rows {
		var at time.Time
		switch r.Status {
		case Pending, Failed:
			at = r.AvailableAt
			if last && !r.AvailableLatest.IsZero() {
				at = r.AvailableLatest
			}
		case Publishing:
			at = r.ClaimExpiresAt
		default:
			continue
		}
		if !found || (last && at.After(best)) || (!last && at.Before(best)) {
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
