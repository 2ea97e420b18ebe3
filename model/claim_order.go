package model

import (
	"fmt"
	"slices"
)

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
