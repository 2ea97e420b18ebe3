package impl

import (
	"fmt"
	"sync/atomic"
)

// SequentialIDs hands out UUIDs 00000000-0000-4000-8000-000000000001, …:
// valid, distinct and the same on every run, so histories replay. Safe for
// concurrent use.
type SequentialIDs struct{ n atomic.Uint64 }

// NewID returns the next id.
func (s *SequentialIDs) NewID() string {
	return fmt.Sprintf("00000000-0000-4000-8000-%012x", s.n.Add(1))
}

// Reset starts the sequence again.
func (s *SequentialIDs) Reset() { s.n.Store(0) }
