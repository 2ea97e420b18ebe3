package harness

import "fmt"

// Role is what an actor does.
type Role uint8

const (
	Producer Role = iota
	Dispatcher
	Consumer
	Operator // redrive, cleanup, stats, and the harness's read-backs
)

var roleNames = [...]string{"producer", "dispatcher", "consumer", "operator"}

// Actor is one process of the system under test with its own session.
type Actor struct {
	Role Role
	N    int
}

func (a Actor) String() string {
	if a.Role == Dispatcher || a.Role == Consumer {
		return fmt.Sprintf("%s-%d", roleNames[a.Role], a.N)
	}
	return roleNames[a.Role]
}
