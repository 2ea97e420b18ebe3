package impl

// Status is an outbox row's state, as stored in outbox_events.status.
type Status string

const (
	StatusPending    Status = "PENDING"
	StatusPublishing Status = "PUBLISHING"
	StatusPublished  Status = "PUBLISHED"
	StatusFailed     Status = "FAILED"
	StatusDead       Status = "DEAD"
)
