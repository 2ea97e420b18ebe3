package model

import (
	"fmt"
	"maps"
)

// Observed is what the harness read back: every outbox row, its payload,
// and the business effects per event_id.
type Observed struct {
	Rows    map[string]Row
	Payload map[string]string
	Effects map[string]int
	// Published is the claim_id whose Publish ran just before: a subject
	// may mark the row inside Publish once the broker has it.
	Published string
}

// Observe compares what the database holds with the model, resolves every
// unknown outcome the observation settles, and returns the new state with
// the disagreements. Call it only when no operation can still take effect
// (every session that ran one has ended or answered). afterCleanup names
// the action that just ran so that rows it removed are judged by retention.
func Observe(s State, o Observed, afterCleanup bool) (State, []Problem) {
	s = s.clone()
	clear(s.Ended) // a session that ended before this read commits nothing more
	var ps []Problem
	ps = append(ps, s.resolveUnsure(o)...)
	ps = append(ps, s.resolveMaybe(o)...)
	for _, id := range ids(s.Rows) {
		ps = append(ps, s.compareRow(id, o, afterCleanup)...)
	}
	for _, id := range ids(o.Rows) {
		if !s.Known(id) {
			ps = append(ps, s.strangerRow(o.Rows[id]))
		}
	}
	for _, id := range ids(o.Payload) {
		if _, fixed := s.Payload[id]; !fixed && s.Known(id) {
			s.Payload[id] = o.Payload[id]
		} else if fixed && s.Payload[id] != o.Payload[id] {
			ps = append(ps, Problem{Property: StableID, Event: id,
				Detail: fmt.Sprintf("payload changed from %s to %s", s.Payload[id], o.Payload[id])})
		}
	}
	ps = append(ps, s.compareEffects(o)...)
	return s, ps
}

// resolveUnsure adopts rows of commits whose event_id was unknown.
func (s *State) resolveUnsure(o Observed) []Problem {
	for _, pay := range ids(s.Unsure) {
		for _, id := range ids(o.Rows) {
			r := o.Rows[id]
			if r.AggregateID == pay && !s.Known(id) {
				s.Rows[id] = r
			}
		}
		delete(s.Unsure, pay)
	}
	return nil
}

// resolveMaybe adopts the observed row where it is one of the candidates.
// The claim_ids it adopts count as handed out only afterwards: one unknown
// claim may have taken several rows under the same new claim_id.
func (s *State) resolveMaybe(o Observed) []Problem {
	var ps []Problem
	var adopted []string
	defer func() {
		for _, c := range adopted {
			s.Claims[c] = true
		}
	}()
	for _, id := range ids(s.Maybe) {
		got, present := o.Rows[id]
		if !present {
			got = Row{ID: id, AggregateID: s.Maybe[id][0].AggregateID}
		}
		cands := s.Maybe[id]
		match := false
		for _, c := range cands {
			if s.sameRow(c, got) {
				match = true
			}
		}
		delete(s.Maybe, id)
		switch {
		case !match:
			p := s.classify(cands[len(cands)-1], got)
			p.Detail = "after an unknown outcome, which no outcome explains: " + p.Detail
			ps = append(ps, p)
			if present {
				s.Rows[id] = got
			}
		case present:
			s.Rows[id] = adopt(cands, got)
			if got.ClaimID != "" {
				adopted = append(adopted, got.ClaimID)
			}
		case cands[0].Status == Published: // an unknown cleanup did delete it
			s.Gone[id] = cands[0]
		case cands[0].Status != Absent && s.Sem.DeleteOnSuccess: // an unknown mark did delete it
			s.Gone[id] = cands[0]
		}
	}
	return ps
}

// compareRow checks one row the model is sure of.
func (s *State) compareRow(id string, o Observed, afterCleanup bool) []Problem {
	want := s.Rows[id]
	got, ok := o.Rows[id]
	if !ok {
		delete(s.Rows, id)
		s.Gone[id] = want
		if s.Sem.DeleteOnSuccess && want.Status == Publishing && want.ClaimID == o.Published && s.carried(id) {
			return nil // deleted inside Publish once the broker had it: allowed
		}
		if afterCleanup {
			return []Problem{{Property: RetentionSafe, Event: id,
				Detail: fmt.Sprintf("cleanup deleted a %s row (only PUBLISHED rows past retention may go)", s.Sem.Name(want.Status))}}
		}
		return []Problem{{Property: NoLoss, Event: id, Detail: fmt.Sprintf("the committed %s row vanished", s.Sem.Name(want.Status))}}
	}
	if s.sameRow(want, got) {
		s.Rows[id] = adopt([]Row{want}, got) // the available_at a jittered backoff chose
		return nil
	}
	s.Rows[id] = adopt([]Row{want}, got) // continue from what is there, so one fault is reported once
	if want.Status != Published && got.Status == Published && want.Attempts == got.Attempts {
		if s.carried(id) {
			if want.Status == Publishing && want.ClaimID == o.Published {
				return nil // marked inside Publish once the broker had it: allowed
			}
			return []Problem{s.classify(want, got)}
		}
		return []Problem{{Property: NoLoss, Event: id, Detail: fmt.Sprintf(
			"marked PUBLISHED but the broker never accepted it: nothing will ever send it (row is %s)", s.describe(got))}}
	}
	return []Problem{s.classify(want, got)}
}

// adopt is the observed row got, which matched (or replaces) the model's
// candidates, with the model's own fields kept: a granted attempt limit
// is not read back.
func adopt(cands []Row, got Row) Row {
	for _, c := range cands {
		got.Limit = max(got.Limit, c.Limit)
	}
	return got
}

// availableOK reports whether got's available_at is what want allows:
// the same instant, or within a jittered backoff's window.
func availableOK(want, got Row) bool {
	if want.AvailableLatest.IsZero() {
		return want.AvailableAt.Equal(got.AvailableAt)
	}
	return !got.AvailableAt.Before(want.AvailableAt) && !got.AvailableAt.After(want.AvailableLatest)
}

// carried reports whether the broker ever accepted event id.
func (s State) carried(id string) bool {
	for _, m := range s.Broker {
		if m.EventID == id {
			return true
		}
	}
	return false
}

// classify names the property a row that should be want but is got
// breaks, by what the row became: a row gone DEAD early, or not gone DEAD
// at its limit, is backoff's (attempts and DEAD at max attempts), never
// no-loss: the row is there, and visible.
func (s State) classify(want, got Row) Problem {
	detail := fmt.Sprintf("row is %s, want %s", s.describe(got), s.describe(want))
	switch {
	case want.Status == Published && got.Status != Published:
		return Problem{Property: Fencing, Event: want.ID, Detail: "a PUBLISHED row reverted: " + detail}
	case want.Attempts != got.Attempts || !availableOK(want, got) ||
		(want.Status != got.Status && (want.Status == Dead || got.Status == Dead || got.Status == Failed)):
		return Problem{Property: Backoff, Event: want.ID, Detail: detail}
	}
	return Problem{Property: ModelAgreement, Event: want.ID, Detail: detail}
}

// strangerRow judges a row the model never expected.
func (s *State) strangerRow(r Row) Problem {
	if s.Aborted[r.AggregateID] {
		return Problem{Property: NoPhantom, Event: r.ID,
			Detail: fmt.Sprintf("row of payment %s exists although its transaction rolled back", r.AggregateID)}
	}
	known := maps.Clone(s.Rows) // rows gone this observation still name their payment
	maps.Copy(known, s.Gone)
	for _, id := range ids(known) {
		if known[id].AggregateID == r.AggregateID {
			s.Rows[r.ID] = r
			return Problem{Property: StableID, Event: r.ID, Detail: fmt.Sprintf(
				"a second event_id for payment %s (event %s already carries it): one business fact under two ids", r.AggregateID, id)}
		}
	}
	s.Rows[r.ID] = r
	return Problem{Property: ModelAgreement, Event: r.ID, Detail: "a row appeared that no action wrote: " + s.describe(r)}
}

// compareEffects checks the consumer's effects and resolves unknown ones.
func (s *State) compareEffects(o Observed) []Problem {
	var ps []Problem
	for _, id := range ids(o.Effects) {
		if n := o.Effects[id]; n > 1 {
			ps = append(ps, Problem{Property: EffectAtMostOnce, Event: id, Detail: fmt.Sprintf("%d business effects", n)})
		}
	}
	for _, id := range ids(s.MaybeFx) {
		if o.Effects[id] > 0 {
			s.Inbox[id] = true
			s.Effects[id] = max(s.Effects[id], 1)
		}
		delete(s.MaybeFx, id)
	}
	all := map[string]bool{}
	for id := range s.Effects {
		all[id] = true
	}
	for id := range o.Effects {
		all[id] = true
	}
	for _, id := range ids(all) {
		want, got := s.Effects[id], o.Effects[id]
		switch {
		case got > 1 || want == got:
		case got < want:
			ps = append(ps, Problem{Property: EffectExactlyOnce, Event: id,
				Detail: fmt.Sprintf("a delivery that committed or was acknowledged left %d business effects, want %d", got, want)})
		default:
			ps = append(ps, Problem{Property: ModelAgreement, Event: id,
				Detail: fmt.Sprintf("%d business effects where no committed delivery explains one", got)})
		}
		s.Effects[id] = got
	}
	return ps
}

// sameRow compares every column the model tracks. AnyClaim in a matches
// any claim_id not handed out before.
func (s State) sameRow(a, b Row) bool {
	claim := a.ClaimID == b.ClaimID || (a.ClaimID == AnyClaim && b.ClaimID != "" && !s.Claims[b.ClaimID])
	return a.Status == b.Status && a.Attempts == b.Attempts && claim &&
		a.ClaimExpiresAt.Equal(b.ClaimExpiresAt) && availableOK(a, b) &&
		a.CreatedAt.Equal(b.CreatedAt) && a.PublishedAt.Equal(b.PublishedAt) &&
		(a.Status == Absent || a.AggregateID == b.AggregateID)
}

func (s State) describe(r Row) string {
	if r.Status == Absent {
		return "absent"
	}
	out := fmt.Sprintf("%s attempts=%d available=%s", s.Sem.Name(r.Status), r.Attempts, stamp(r.AvailableAt))
	if !r.AvailableLatest.IsZero() {
		out += ".." + stamp(r.AvailableLatest)
	}
	if r.ClaimID != "" {
		out += fmt.Sprintf(" claim=%s until %s", r.ClaimID, stamp(r.ClaimExpiresAt))
	}
	if !r.PublishedAt.IsZero() {
		out += " published=" + stamp(r.PublishedAt)
	}
	return out
}
