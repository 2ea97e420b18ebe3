package loopcheck

import "github.com/outboxcheck/outboxcheck/harness"

// noteFault keeps err if it is the first subject fault (a broken
// protocol: harness.SubjectFault) of the schedule, from whichever
// goroutine called the subject, and says whether it was one. The
// schedule then ends with a subject error (faulted).
func (c *check) noteFault(err error) bool {
	f, ok := harness.AsSubjectFault(err)
	if !ok {
		return false
	}
	c.faultMu.Lock()
	defer c.faultMu.Unlock()
	if c.fault == nil {
		c.fault = f
	}
	return true
}

// faulted is the subject error that ends the schedule, if the subject
// broke its protocol.
func (c *check) faulted() *harness.Failure {
	c.faultMu.Lock()
	f := c.fault
	c.faultMu.Unlock()
	if f == nil {
		return nil
	}
	c.histMu.Lock()
	defer c.histMu.Unlock()
	h := harness.History{Entries: append([]harness.Entry(nil), c.hist.Entries...)}
	return harness.SubjectFailure(f, &h)
}

// infraOrSubject is the Failure of an error that stopped a run: the
// subject's, if it is a subject fault, else the infrastructure's.
func infraOrSubject(err error) *harness.Failure {
	if f, ok := harness.AsSubjectFault(err); ok {
		return harness.SubjectFailure(f, nil)
	}
	return &harness.Failure{Infrastructure: true, Message: err.Error()}
}
