package model

import (
	"fmt"
	"time"
)

// Redrive checks and applies an operator's redrive of event id: a row the
// declared rule takes (DEAD; any idle row under AnyIdle) is made PENDING
// (FAILED under AsFailed) and due now, with the same event_id, and its attempts reset (or, under
// OneMore, kept with one more attempt granted at its limit).
func Redrive(s State, id string, changed bool, o Outcome) (State, []Problem) {
	s = s.clone()
	r, ok := s.Rows[id]
	eligible := ok && s.redrivable(r)
	redriven := s.redriven(r)
	switch {
	case o == Unknown:
		if eligible {
			s.Maybe[id] = []Row{r, redriven}
			delete(s.Rows, id)
		}
	case o == NotDone:
	case changed != eligible:
		return s, []Problem{{Property: ModelAgreement, Event: id,
			Detail: fmt.Sprintf("redrive of a %s row reported changed=%v (%s)", s.Sem.Name(r.Status), changed, s.redriveRule())}}
	case eligible:
		s.Rows[id] = redriven
	}
	return s, nil
}

// redrivable reports whether a redrive takes r.
func (s State) redrivable(r Row) bool {
	if s.Sem.Redrive.AnyIdle {
		return r.Status != Publishing && r.Status != Absent
	}
	return r.Status == Dead
}

func (s State) redriveRule() string {
	if s.Sem.Redrive.AnyIdle {
		return "redrive takes any row not held by a claim"
	}
	return "redrive takes DEAD rows only"
}

// redriven is r after a redrive at s.Now.
func (s State) redriven(r Row) Row {
	r.Status, r.AvailableAt, r.AvailableLatest = Pending, s.Now, time.Time{}
	if s.Sem.Redrive.AsFailed {
		r.Status = Failed
	}
	r.ClaimID, r.ClaimExpiresAt, r.PublishedAt = "", time.Time{}, time.Time{}
	switch {
	case !s.Sem.Redrive.OneMore:
		r.Attempts, r.Limit = 0, 0
	case r.Attempts >= s.Sem.limit(r):
		r.Limit = r.Attempts + 1
	}
	return r
}
