package model

import "fmt"

// Commit records the producer transaction for payment, whose event the
// subject named eventID ("" if it did not say), at s.Now. An Unknown outcome
// leaves the row possible but not certain until Observe sees it or its
// absence.
func Commit(s State, payment, eventID string, o Outcome) (State, []Problem) {
	s = s.clone()
	row := Row{ID: eventID, AggregateID: payment, Status: Pending, AvailableAt: s.Now, CreatedAt: s.Now}
	switch o {
	case Done:
		if eventID == "" {
			return s, []Problem{{Property: ModelAgreement, Detail: fmt.Sprintf("commit of %s returned no event_id", payment)}}
		}
		if s.Known(eventID) {
			return s, []Problem{{Property: StableID, Event: eventID, Detail: fmt.Sprintf("event_id reused for payment %s", payment)}}
		}
		s.Rows[eventID] = row
	case Unknown:
		if eventID == "" || s.Known(eventID) {
			s.Unsure[payment] = s.Now
		} else {
			s.Maybe[eventID] = []Row{{ID: eventID, AggregateID: payment}, row}
		}
	}
	return s, nil
}

// Rollback records a producer transaction that wrote and then rolled back.
// Nothing of it may ever be seen.
func Rollback(s State, payment string) State {
	s = s.clone()
	s.Aborted[payment] = true
	return s
}
