package model

// Outcome is what the caller can know about an operation's effect.
type Outcome uint8

const (
	Done    Outcome = iota // took effect
	NotDone                // definitely took no effect
	Unknown                // may or may not have taken effect
)

func (o Outcome) String() string { return [...]string{"done", "not done", "unknown"}[o] }
