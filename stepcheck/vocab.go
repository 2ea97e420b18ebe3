package stepcheck

import (
	"io"

	"github.com/outboxcheck/outboxcheck/harness"
)

// The vocabulary every contract speaks lives in package harness; the step
// contract's own code names it here as it always has.
type (
	Actor          = harness.Actor
	Role           = harness.Role
	Payment        = harness.Payment
	Message        = harness.Message
	Publisher      = harness.Publisher
	Failpoint      = harness.Failpoint
	Failpoints     = harness.Failpoints
	History        = harness.History
	Entry          = harness.Entry
	Failure        = harness.Failure
	FirstFailure   = harness.FirstFailure
	Summary        = harness.Summary
	BrokerCoverage = harness.BrokerCoverage
	CrashCoverage  = harness.CrashCoverage
	CallCount      = harness.CallCount
	Checkpoint     = harness.Checkpoint
	FaultCount     = harness.FaultCount
	PropertyRecord = harness.PropertyRecord
	PaymentOutcome = harness.PaymentOutcome
	Timing         = harness.Timing
	Spent          = harness.Spent
	Recorder       = harness.Recorder
	Budget         = harness.Budget
)

const (
	Producer   = harness.Producer
	Dispatcher = harness.Dispatcher
	Consumer   = harness.Consumer
	Operator   = harness.Operator

	BeforeCommit = harness.BeforeCommit
	AfterCommit  = harness.AfterCommit

	OutcomeOK      = harness.OutcomeOK
	OutcomeFailed  = harness.OutcomeFailed
	OutcomeUnknown = harness.OutcomeUnknown

	SpentCalls     = harness.SpentCalls
	SpentDeadlines = harness.SpentDeadlines
	SpentReadBacks = harness.SpentReadBacks
	SpentSettle    = harness.SpentSettle
	SpentReset     = harness.SpentReset
	SpentGate      = harness.SpentGate
	SpentDBCrash   = harness.SpentDBCrash
	SpentNone      = harness.SpentNone
)

// NewRecorder is harness.NewRecorder.
func NewRecorder(name string, live io.Writer) *Recorder { return harness.NewRecorder(name, live) }

// StepNumber is harness.StepNumber.
func StepNumber(n int) string { return harness.StepNumber(n) }
