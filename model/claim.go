package model

import (
	"fmt"
	"time"
)

// Claimed is one event a claim returned, as the subject reported it.
type Claimed struct {
	ID       string
	Attempts int
	ClaimID  string
	Holder   int // the claimant (a dispatcher), for lock-held claims (Release)
}

// Claim checks a determinate claim result of at most limit rows taken at
// s.Now and applies it. Each row carries the claim_id it was taken under;
// every claim_id must be fresh (not handed out by an earlier claim). Any subset of the due rows is accepted (SKIP LOCKED may pass
// rows over; ties in the claim order may fall either way): a claim that
// takes too few is a liveness matter for the drain, but one that takes a
// row that is not due, or takes it wrongly, is a violation now.
func Claim(s State, limit int, got []Claimed) (State, []Problem) {
	return s.claim(limit, got, func(string) bool { return false })
}

// ClaimBeside is Claim for a claim that ran at the same instant as
// another: with SKIP LOCKED each passes over the rows the other holds, so
// a row the other took may be passed over (and, if the other's outcome is
// not known to be done, any row may: what it locked is unknown). Both
// claims are applied in turn, each with ClaimBeside; a row both took is
// caught as a live lease on the second.
func ClaimBeside(s State, limit int, got []Claimed, other Outcome, otherGot []Claimed) (State, []Problem) {
	held := map[string]bool{}
	for _, c := range otherGot {
		held[c.ID] = true
	}
	return s.claim(limit, got, func(id string) bool { return other != Done || held[id] })
}

// claim applies a claim; locked says which due rows it may have found
// locked by someone else, and so passed over.
func (s State) claim(limit int, got []Claimed, locked func(id string) bool) (State, []Problem) {
	ps := s.checkOrder(limit, got, locked)
	s = s.clone()
	if len(got) > limit {
		ps = append(ps, Problem{Property: ModelAgreement, Detail: fmt.Sprintf("claimed %d rows, limit %d", len(got), limit)})
	}
	for _, c := range got {
		if s.Claims[c.ClaimID] {
			ps = append(ps, Problem{Property: ModelAgreement, Event: c.ID, Detail: fmt.Sprintf("claim_id %s was used by an earlier claim", c.ClaimID)})
		}
	}
	for _, c := range got {
		s.Claims[c.ClaimID] = true
	}
	seen := map[string]string{} // event_id → the claim_id it came under
	for _, c := range got {
		if first, twice := seen[c.ID]; twice {
			if first != c.ClaimID { // two claimants (a pool's workers) hold it at once
				ps = append(ps, Problem{Property: LeaseExclusive, Event: c.ID, Detail: fmt.Sprintf("taken under claims %s and %s at once: the first holds its lock", first, c.ClaimID)})
			} else {
				ps = append(ps, Problem{Property: ModelAgreement, Event: c.ID, Detail: "returned twice by one claim"})
			}
			continue
		}
		seen[c.ID] = c.ClaimID
		r, ok := s.Rows[c.ID]
		if !ok {
			ps = append(ps, claimOfUnknown(s, c.ID)...)
			continue
		}
		if p, bad := s.claimable(r); bad {
			ps = append(ps, p)
		}
		want := s.claimedAttempts(r)
		if c.Attempts != want {
			ps = append(ps, Problem{Property: Backoff, Event: c.ID,
				Detail: fmt.Sprintf("claim returned attempts %d, want %d (%s)", c.Attempts, want, s.attemptRule())})
		}
		if c.ClaimID == "" {
			ps = append(ps, Problem{Property: ModelAgreement, Event: c.ID, Detail: "claimed without a claim_id"})
		}
		r.Status, r.Attempts, r.ClaimID = Publishing, want, c.ClaimID
		if s.Sem.LockHeld {
			s.Held[c.ID] = Hold{Row: r, Holder: c.Holder}
			continue
		}
		r.ClaimExpiresAt = s.Now.Add(s.Sem.Lease)
		s.Rows[c.ID] = r
	}
	return s, ps
}

// claimedAttempts is r's attempts once claimed: one more where claims
// count them (the seed), the same where failures do.
func (s State) claimedAttempts(r Row) int {
	if s.Sem.AttemptsOnFailure {
		return r.Attempts
	}
	return r.Attempts + 1
}

func (s State) attemptRule() string {
	if s.Sem.AttemptsOnFailure {
		return "attempts count failures, not claims"
	}
	return "claiming counts an attempt"
}

// claimable says why r must not be claimed at s.Now, if it must not.
func (s State) claimable(r Row) (Problem, bool) {
	if s.Due(r) {
		return Problem{}, false
	}
	if h, held := s.Held[r.ID]; held {
		return Problem{Property: LeaseExclusive, Event: r.ID, Detail: fmt.Sprintf("claimed while claim %s's transaction holds its lock", h.Row.ClaimID)}, true
	}
	switch r.Status {
	case Pending, Failed:
		return Problem{Property: Backoff, Event: r.ID, Detail: fmt.Sprintf("claimed %s row before its available_at %s (now %s%s)",
			s.Sem.Name(r.Status), stamp(r.AvailableAt), stamp(s.Now), s.edgeNote(DueEdge, r.AvailableAt))}, true
	case Publishing:
		if s.Sem.Rescue != nil && s.Expired(r) {
			return Problem{Property: LeaseExclusive, Event: r.ID, Detail: fmt.Sprintf("claimed while claim %s holds it, its lease over since %s but not yet rescued (now %s): only the rescuer takes an expired lease back",
				r.ClaimID, stamp(r.ClaimExpiresAt), stamp(s.Now))}, true
		}
		return Problem{Property: LeaseExclusive, Event: r.ID, Detail: fmt.Sprintf("claimed while claim %s holds it until %s (now %s%s)",
			r.ClaimID, stamp(r.ClaimExpiresAt), stamp(s.Now), s.edgeNote(ExpiryEdge, r.ClaimExpiresAt))}, true
	}
	return Problem{Property: ModelAgreement, Event: r.ID, Detail: fmt.Sprintf("claimed a %s row", s.Sem.Name(r.Status))}, true
}

// edgeNote explains a refusal at exactly edge e where it is strict.
func (s State) edgeNote(e Edge, at time.Time) string {
	if s.Sem.StrictAt(e) && at.Equal(s.Now) {
		return "; declared strict: due only once the instant is past"
	}
	return ""
}

func claimOfUnknown(s State, id string) []Problem {
	if _, gone := s.Gone[id]; gone {
		return []Problem{{Property: ModelAgreement, Event: id, Detail: "claimed a row that was deleted"}}
	}
	if _, maybe := s.Maybe[id]; maybe {
		return []Problem{{Property: ModelAgreement, Event: id, Detail: "claimed while its outcome is unresolved; observe first"}}
	}
	return []Problem{{Property: NoPhantom, Event: id, Detail: "claimed an event no committed transaction wrote"}}
}

// AnyClaim stands for a claim_id the model never saw: the one a claim
// whose reply was lost took rows under.
const AnyClaim = "*"

// ClaimUnknown records a claim whose outcome is unknown: every due row may
// now be held by it (under a claim_id nobody saw), or not.
//
// A lock-held claim's unknown outcome changed nothing anyone sees: its
// claimant's session is ended before the next step (Release), which ends
// whatever it held.
func ClaimUnknown(s State) State {
	if s.Sem.LockHeld {
		return s
	}
	s = s.clone()
	claimID := AnyClaim
	for _, id := range ids(s.Rows) {
		r := s.Rows[id]
		if !s.Due(r) {
			continue
		}
		claimed := r
		claimed.Status, claimed.Attempts, claimed.ClaimID = Publishing, s.claimedAttempts(r), claimID
		claimed.ClaimExpiresAt = s.Now.Add(s.Sem.Lease)
		s.Maybe[id] = []Row{r, claimed}
		delete(s.Rows, id)
	}
	return s
}
