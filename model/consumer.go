package model

import "fmt"

// Publish records a publish of event id with payload that the broker
// accepted. A message for an event no committed transaction wrote, or with
// another payload than the one fixed at creation, is a problem.
func Publish(s State, id, payload string) (State, []Problem) {
	s = s.clone()
	s.Broker = append(s.Broker, Message{EventID: id, Payload: payload})
	return s, s.checkMessage(Message{EventID: id, Payload: payload})
}

func (s State) checkMessage(m Message) []Problem {
	if !s.Known(m.EventID) {
		for _, id := range ids(s.Payload) {
			if s.Payload[id] == m.Payload {
				return []Problem{{Property: StableID, Event: m.EventID,
					Detail: fmt.Sprintf("published under a new event_id; event %s has this payload", id)}}
			}
		}
		return []Problem{{Property: NoPhantom, Event: m.EventID, Detail: "the broker carries an event no committed transaction wrote"}}
	}
	if want, ok := s.Payload[m.EventID]; ok && want != m.Payload {
		return []Problem{{Property: StableID, Event: m.EventID,
			Detail: fmt.Sprintf("published payload %s, fixed at creation as %s", m.Payload, want)}}
	}
	return nil
}

// Delivery is how a consumer's handling of a message ended.
type Delivery uint8

const (
	Acked            Delivery = iota // committed and acknowledged
	CrashedBefore                    // died before COMMIT: no effect, no ack
	CrashedAfter                     // committed, died before the ack
	DeliveryUnknown                  // failed in a way that may have committed; no ack
	DeliveryRejected                 // failed definitely (nothing committed); no ack
)

// Deliver applies the consumer's handling of broker message i.
func Deliver(s State, i int, d Delivery) State {
	s = s.clone()
	id := s.Broker[i].EventID
	switch d {
	case Acked, CrashedAfter:
		if !s.Inbox[id] {
			s.Inbox[id] = true
			s.Effects[id]++
		}
		if d == Acked {
			s.Acked[id] = true
		}
	case DeliveryUnknown:
		if !s.Inbox[id] {
			s.MaybeFx[id] = true
		}
	}
	return s
}
