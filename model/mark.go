package model

import (
	"fmt"
	"time"
)

// MarkPublished checks and applies a dispatcher's MarkPublished of event id
// under claimID at s.Now. changed is what the subject reported (ignored
// when o is Unknown).
// Under DeleteOnSuccess the row goes instead (the model keeps its
// published state among the gone rows, which must be delivered).
func MarkPublished(s State, id, claimID string, changed bool, o Outcome) (State, []Problem) {
	published := func(r Row) Row {
		r.Status, r.PublishedAt, r.ClaimID, r.ClaimExpiresAt = Published, s.Now, "", time.Time{}
		return r
	}
	if !s.Sem.DeleteOnSuccess {
		return mark(s, id, claimID, changed, o, published)
	}
	before, _, _ := s.markTarget(id, claimID)
	s, ps := mark(s, id, claimID, changed, o, func(r Row) Row { return Row{ID: r.ID, AggregateID: r.AggregateID} })
	if r, ok := s.Rows[id]; ok && r.Status == Absent {
		delete(s.Rows, id)
		s.Gone[id] = published(before)
	}
	return s, ps
}

// MarkFailed checks and applies a fenced failure of event id under claimID
// at s.Now: the row is FAILED, due after the declared backoff, or Dead at
// its attempt limit.
func MarkFailed(s State, id, claimID string, changed bool, o Outcome) (State, []Problem) {
	return mark(s, id, claimID, changed, o, func(r Row) Row {
		return s.fail(r, true, s.Sem.BackoffRange)
	})
}

// fail is row r after its attempt failed at s.Now (a failure update, or a
// rescue): its claim revoked; one attempt more where failures count them
// and counts says this one does; Dead at the row's limit, else FAILED and
// due again within the wait window for its attempts.
func (s State) fail(r Row, counts bool, wait func(attempts int) (lo, hi time.Duration)) Row {
	if s.Sem.AttemptsOnFailure && counts {
		r.Attempts++
	}
	r.ClaimID, r.ClaimExpiresAt = "", time.Time{}
	r.Status = Failed
	if r.Attempts >= s.Sem.limit(r) {
		r.Status = Dead
		if s.Sem.DeadKeepsAvailableAt {
			return r
		}
	}
	lo, hi := wait(r.Attempts)
	r.AvailableAt, r.AvailableLatest = s.Now.Add(lo), time.Time{}
	if hi > lo {
		r.AvailableLatest = s.Now.Add(hi)
	}
	return r
}

func mark(s State, id, claimID string, changed bool, o Outcome, apply func(Row) Row) (State, []Problem) {
	s = s.clone()
	r, current, ended := s.markTarget(id, claimID)
	switch {
	case o == Unknown:
		if current {
			s.Maybe[id] = []Row{s.Rows[id], apply(r)} // what others saw until then, or the mark
			s.endMark(id)
		}
		return s, nil
	case o == NotDone:
		return s, nil
	case changed && !current:
		return s, []Problem{{Property: Fencing, Event: id,
			Detail: fmt.Sprintf("mark with stale claim_id %s changed the row (current: %s)", claimID, s.holderOf(id))}}
	case !changed && current && ended:
		s.endMark(id) // it came after its session's end: nothing to commit
		return s, nil
	case !changed && current:
		return s, []Problem{{Property: ModelAgreement, Event: id,
			Detail: fmt.Sprintf("mark with the current claim_id %s changed nothing", claimID)}}
	}
	if current {
		s.endMark(id)
		s.Rows[id] = apply(r)
	}
	return s, nil
}

// markTarget is the row a mark under claimID applies to, whether that
// claim is current, and whether (lock-held) its session ended in this
// step, so that the mark may or may not have committed before the end.
func (s State) markTarget(id, claimID string) (r Row, current, ended bool) {
	if !s.Sem.LockHeld {
		r, ok := s.Rows[id]
		return r, ok && r.Status == Publishing && r.ClaimID == claimID, false
	}
	h, ok := s.Held[id]
	if !ok {
		h, ok = s.Ended[id]
		ended = ok
	}
	return h.Row, ok && h.Row.ClaimID == claimID, ended
}

// endMark takes row id out of the model's sure rows and claims: its
// mark's outcome is about to replace it.
func (s *State) endMark(id string) {
	delete(s.Rows, id)
	delete(s.Held, id)
	delete(s.Ended, id)
}

// holderOf says which claim holds row id now, for a fencing problem.
func (s State) holderOf(id string) string {
	if h, ok := s.Held[id]; ok {
		return "held by claim " + h.Row.ClaimID
	}
	r := s.Rows[id]
	return fmt.Sprintf("%s %s", r.Status, orNone(r.ClaimID))
}
