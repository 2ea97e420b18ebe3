package loopcheck

import "time"

// spell is one broker fault the schedule put on, for the coverage: an
// outage or a slow window (from, until: points in real time), a poison
// (of pay) or a lost ack, and how many publishes it changed (hits).
type spell struct {
	kind        string // broker-down, broker-slow, poison, slow-payment, ack-lost
	pay         string // a poison's or slow payment's
	from, until time.Time
	hits        int
	aim         time.Duration // the deadline it was aimed at, if it was
}

// covers says whether the window is in force at t.
func (s *spell) covers(t time.Time) bool { return !t.Before(s.from) && t.Before(s.until) }

// cast records a spell. The caller holds b.mu.
func (b *broker) cast(s *spell) { b.spells = append(b.spells, s) }

// hitWindows counts a publish changed at now by every window of kind in
// force. The caller holds b.mu.
func (b *broker) hitWindows(kind string, now time.Time) {
	for _, s := range b.spells {
		if s.kind == kind && s.covers(now) {
			s.hits++
		}
	}
}

// hitLatest counts a publish changed by the latest spell of kind cast on
// pay (a poison). The caller holds b.mu.
func (b *broker) hitLatest(kind, pay string) {
	for i := len(b.spells) - 1; i >= 0; i-- {
		if s := b.spells[i]; s.kind == kind && s.pay == pay {
			s.hits++
			return
		}
	}
}

// hitOldestUnhit counts the lost ack against the oldest ack-lost spell
// that has not lost one yet: each loses exactly one. The caller holds b.mu.
func (b *broker) hitOldestUnhit(kind string) {
	for _, s := range b.spells {
		if s.kind == kind && s.hits == 0 {
			s.hits++
			return
		}
	}
}

// endWindows ends, at now, every window of kind still in force. The
// caller holds b.mu.
func (b *broker) endWindows(kind string, now time.Time) {
	for _, s := range b.spells {
		if s.kind == kind && s.until.After(now) {
			s.until = now
		}
	}
}

// castSpells returns a copy of every spell cast so far.
func (b *broker) castSpells() []spell {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]spell, len(b.spells))
	for i, s := range b.spells {
		out[i] = *s
	}
	return out
}
