package properties

import (
	"fmt"

	"github.com/outboxcheck/outboxcheck/faults"
)

// Summary is what a run did, for reports: how many checks, what each fault
// kind did, and which properties did not apply.
type Summary struct {
	Checks        int
	Network       faults.Coverage
	Broker        BrokerCoverage
	Crashes       CrashCoverage
	NotApplicable map[string]string // property or fault → why
}

// BrokerCoverage counts the broker link's own faults.
type BrokerCoverage struct {
	Refused int // publishes the broker refused
	AckLost int // publishes accepted whose acknowledgement was lost
}

// CrashCoverage counts crashes, and how many crash points were reached.
type CrashCoverage struct {
	Dispatcher        int // dispatchers killed between requests
	DispatcherMidMark int // dispatchers killed inside a mark, before or after it reached the server
	ConsumerScheduled int // consumer crashes scheduled at a failpoint
	ConsumerReached   int // of those, how many reached their failpoint
	Database          int
}

func (s Summary) String() string {
	out := fmt.Sprintf("%d checks; network: %v; broker: refused %d, ack lost %d; crashes: dispatcher %d (+%d mid-mark), consumer %d of %d reached, database %d",
		s.Checks, s.Network, s.Broker.Refused, s.Broker.AckLost, s.Crashes.Dispatcher, s.Crashes.DispatcherMidMark,
		s.Crashes.ConsumerReached, s.Crashes.ConsumerScheduled, s.Crashes.Database)
	if idle := s.Network.Idle(); len(idle) > 0 {
		out += fmt.Sprintf("; INJECTED BUT NEVER STRUCK: %v", idle)
	}
	for k, why := range s.NotApplicable {
		out += fmt.Sprintf("; %s not applicable: %s", k, why)
	}
	return out
}
