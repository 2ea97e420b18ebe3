package model

import (
	"fmt"
	"slices"
	"time"
)

// Claimed is one event a claim returned, as the subject reported it.
type Claimed struct {
	ID       string
	Attempts int
	ClaimID  string
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
	seen := map[string]bool{}
	for _, c := range got {
		if seen[c.ID] {
			ps = append(ps, Problem{Property: ModelAgreement, Event: c.ID, Detail: "returned twice by one claim"})
			continue
		}
		seen[c.ID] = true
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

// DueOrder lists the due rows in claim order (available_at, created_at);
// rows that tie on both are grouped, as the database may order them either
// way.
func (s State) DueOrder() [][]string {
	var due []Row
	for _, id := range ids(s.Rows) {
		if r := s.Rows[id]; s.Due(r) {
			due = append(due, r)
		}
	}
	slices.SortStableFunc(due, func(a, b Row) int {
		if c := a.AvailableAt.Compare(b.AvailableAt); c != 0 {
			return c
		}
		return a.CreatedAt.Compare(b.CreatedAt)
	})
	var groups [][]string
	for i, r := range due {
		if i > 0 && r.AvailableAt.Equal(due[i-1].AvailableAt) && r.CreatedAt.Equal(due[i-1].CreatedAt) {
			groups[len(groups)-1] = append(groups[len(groups)-1], r.ID)
			continue
		}
		groups = append(groups, []string{r.ID})
	}
	return groups
}

// checkOrder flags a full claim (limit rows) that took a row while a due row
// strictly earlier in claim order stayed behind. A short claim may have
// skipped locked rows; the drain judges what it left.
func (s State) checkOrder(limit int, got []Claimed, locked func(id string) bool) []Problem {
	if len(got) < limit {
		return nil
	}
	taken := map[string]bool{}
	for _, c := range got {
		taken[c.ID] = true
	}
	var left []string // due rows not taken, in earlier groups
	for _, g := range s.DueOrder() {
		for _, id := range g {
			if taken[id] && len(left) > 0 {
				return []Problem{s.passedOver(left[0], id)}
			}
		}
		for _, id := range g {
			if !taken[id] && !locked(id) {
				left = append(left, id)
			}
		}
	}
	return nil
}

// passedOver names the problem of a full claim that took id while skipped,
// due earlier, stayed behind. An expired lease passed over is an event at
// risk of loss: nothing else would ever take it.
func (s State) passedOver(skipped, id string) Problem {
	detail := fmt.Sprintf("claimed %s ahead of %s, which is due earlier in (available_at, created_at) order", id, skipped)
	if s.Rows[skipped].Status == Publishing {
		return Problem{Property: NoLoss, Event: skipped, Detail: "expired lease passed over: " + detail}
	}
	return Problem{Property: ModelAgreement, Event: id, Detail: detail}
}

// claimable says why r must not be claimed at s.Now, if it must not.
func (s State) claimable(r Row) (Problem, bool) {
	if s.Due(r) {
		return Problem{}, false
	}
	switch r.Status {
	case Pending, Failed:
		return Problem{Property: Backoff, Event: r.ID, Detail: fmt.Sprintf("claimed %s row before its available_at %s (now %s%s)",
			s.Sem.Name(r.Status), stamp(r.AvailableAt), stamp(s.Now), s.edgeNote(r.AvailableAt))}, true
	case Publishing:
		if s.Sem.Rescue != nil && s.Expired(r) {
			return Problem{Property: LeaseExclusive, Event: r.ID, Detail: fmt.Sprintf("claimed while claim %s holds it, its lease over since %s but not yet rescued (now %s): only the rescuer takes an expired lease back",
				r.ClaimID, stamp(r.ClaimExpiresAt), stamp(s.Now))}, true
		}
		return Problem{Property: LeaseExclusive, Event: r.ID, Detail: fmt.Sprintf("claimed while claim %s holds it until %s (now %s%s)",
			r.ClaimID, stamp(r.ClaimExpiresAt), stamp(s.Now), s.edgeNote(r.ClaimExpiresAt))}, true
	}
	return Problem{Property: ModelAgreement, Event: r.ID, Detail: fmt.Sprintf("claimed a %s row", s.Sem.Name(r.Status))}, true
}

// edgeNote explains a refusal at exactly an edge under strict edges.
func (s State) edgeNote(at time.Time) string {
	if s.Sem.Strict && at.Equal(s.Now) {
		return "; declared strict: due only once the instant is past"
	}
	return ""
}

func claimOfUnknown(s State, id string) []Problem {
	if _, gone := s.Gone[id]; gone {
		return []Problem{{Property: ModelAgreement, Event: id, Detail: "claimed a row that cleanup deleted"}}
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
func ClaimUnknown(s State) State {
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

// MarkPublished checks and applies a dispatcher's MarkPublished of event id
// under claimID at s.Now. changed is what the subject reported (ignored
// when o is Unknown).
func MarkPublished(s State, id, claimID string, changed bool, o Outcome) (State, []Problem) {
	return mark(s, id, claimID, changed, o, func(r Row) Row {
		r.Status, r.PublishedAt, r.ClaimID, r.ClaimExpiresAt = Published, s.Now, "", time.Time{}
		return r
	})
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

// Rescue checks and applies a rescuer's pass at s.Now (Semantics.Rescue):
// every PUBLISHING row whose lease is over is re-queued, its claim
// revoked. n is how many rows the subject said it re-queued. One that
// leaves an expired lease behind loses its event (nothing else takes it
// back); one that re-queues more revoked a live claim.
func Rescue(s State, n int, o Outcome) (State, []Problem) {
	if o == NotDone {
		return s, nil
	}
	s = s.clone()
	rule := *s.Sem.Rescue
	wait := func(int) (time.Duration, time.Duration) { return rule.Delay, rule.Delay }
	if rule.UseBackoff {
		wait = s.Sem.BackoffRange
	}
	var expired []string
	for _, id := range ids(s.Rows) {
		if s.Expired(s.Rows[id]) {
			expired = append(expired, id)
		}
	}
	for _, id := range expired {
		r := s.Rows[id]
		next := s.fail(r, rule.CountsAttempt, wait)
		if o == Unknown {
			s.Maybe[id] = []Row{r, next}
			delete(s.Rows, id)
		} else {
			s.Rows[id] = next
		}
	}
	switch {
	case o == Unknown:
	case n < len(expired):
		return s, []Problem{{Property: NoLoss, Event: expired[0],
			Detail: fmt.Sprintf("rescue re-queued %d rows, but %d leases were over (%v): a lease left over is never taken back", n, len(expired), expired)}}
	case n > len(expired):
		return s, []Problem{{Property: LeaseExclusive,
			Detail: fmt.Sprintf("rescue re-queued %d rows; only %d leases were over (%v): it revoked a live claim", n, len(expired), expired)}}
	}
	return s, nil
}

func mark(s State, id, claimID string, changed bool, o Outcome, apply func(Row) Row) (State, []Problem) {
	s = s.clone()
	r, ok := s.Rows[id]
	current := ok && r.Status == Publishing && r.ClaimID == claimID
	switch {
	case o == Unknown:
		if current {
			s.Maybe[id] = []Row{r, apply(r)}
			delete(s.Rows, id)
		}
		return s, nil
	case o == NotDone:
		return s, nil
	case changed && !current:
		return s, []Problem{{Property: Fencing, Event: id,
			Detail: fmt.Sprintf("mark with stale claim_id %s changed the row (current: %s %s)", claimID, r.Status, orNone(r.ClaimID))}}
	case !changed && current:
		return s, []Problem{{Property: ModelAgreement, Event: id,
			Detail: fmt.Sprintf("mark with the current claim_id %s changed nothing", claimID)}}
	}
	if current {
		s.Rows[id] = apply(r)
	}
	return s, nil
}

// Redrive checks and applies an operator's redrive of event id: a row the
// declared rule takes (DEAD; any idle row under AnyIdle) is made PENDING
// and due now, with the same event_id, and its attempts reset (or, under
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
	r.ClaimID, r.ClaimExpiresAt, r.PublishedAt = "", time.Time{}, time.Time{}
	switch {
	case !s.Sem.Redrive.OneMore:
		r.Attempts, r.Limit = 0, 0
	case r.Attempts >= s.Sem.limit(r):
		r.Limit = r.Attempts + 1
	}
	return r
}

// Cleanup checks and applies the deletion of PUBLISHED rows published at or
// before s.Now-retention; n is how many the subject said it deleted.
func Cleanup(s State, retention time.Duration, n int, o Outcome) (State, []Problem) {
	if o == NotDone {
		return s, nil
	}
	s = s.clone()
	cutoff := s.Now.Add(-retention)
	var expired []string
	for _, id := range ids(s.Rows) {
		if r := s.Rows[id]; r.Status == Published && s.Sem.reached(r.PublishedAt, cutoff) {
			expired = append(expired, id)
		}
	}
	for _, id := range expired {
		r := s.Rows[id]
		if o == Unknown {
			s.Maybe[id] = []Row{r, {ID: id, AggregateID: r.AggregateID}}
		} else {
			s.Gone[id] = r
		}
		delete(s.Rows, id)
	}
	switch {
	case o == Unknown:
	case n > len(expired):
		return s, []Problem{{Property: RetentionSafe,
			Detail: fmt.Sprintf("cleanup deleted %d rows; only %d were PUBLISHED past retention (%v)", n, len(expired), expired)}}
	case n < len(expired):
		return s, []Problem{{Property: ModelAgreement,
			Detail: fmt.Sprintf("cleanup deleted %d rows, want %d (%v)", n, len(expired), expired)}}
	}
	return s, nil
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "NULL"
	}
	return t.Format("Jan 2 15:04:05.000")
}

func orNone(s string) string {
	if s == "" {
		return "(no claim)"
	}
	return s
}
