package harness

import "errors"

// SubjectFault is an error that is the subject's own fault whatever the
// call it came from: a subject in another process that breaks its
// protocol or will not start. A contract ends the run with a subject
// error (Failure.SubjectError, exit 4) naming SubjectOperation, never a
// property violation and never infrastructure: a relay that writes
// garbage has not "stopped relaying", and a consumer that does has not
// "lost" the message.
type SubjectFault interface {
	error
	SubjectOperation() string
}

// AsSubjectFault is err's SubjectFault, if it wraps one.
func AsSubjectFault(err error) (SubjectFault, bool) {
	var f SubjectFault
	if errors.As(err, &f) {
		return f, true
	}
	return nil, false
}

// SubjectFailure is the Failure of a run a subject fault ended.
func SubjectFailure(f SubjectFault, h *History) *Failure {
	return &Failure{SubjectError: true, Operation: f.SubjectOperation(), Message: f.Error(), History: h}
}
