package model

import (
	"fmt"
	"time"
)

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
		if r := s.Rows[id]; r.Status == Published && s.Sem.reached(RetentionEdge, r.PublishedAt, cutoff) {
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
