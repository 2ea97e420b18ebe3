package model

// Status is an outbox row's state. Its String is the stored spelling.
type Status uint8

const (
	Absent Status = iota // no row: never committed, rolled back, or cleaned up
	Pending
	Publishing
	Published
	Failed
	Dead
)

var statusNames = [...]string{"ABSENT", "PENDING", "PUBLISHING", "PUBLISHED", "FAILED", "DEAD"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "INVALID"
}

// ParseStatus reads a stored status; ok is false for an unknown spelling.
func ParseStatus(s string) (Status, bool) {
	for i, n := range statusNames[1:] {
		if n == s {
			return Status(i + 1), true
		}
	}
	return Absent, false
}

// Waiting reports whether a row still has to go out (Stats' "pending").
func (s Status) Waiting() bool { return s == Pending || s == Failed || s == Publishing }
