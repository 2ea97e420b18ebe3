package properties_test

import (
	"testing"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/internal/pgtest"
	"github.com/outboxcheck/outboxcheck/properties"
)

// TestReference runs the reference implementation through the state
// machine: every safety property after every action, liveness after the
// drain. -rapid.checks and -rapid.steps scale it.
func TestReference(t *testing.T) {
	db := pgtest.Database(t)
	properties.Exercise(t, reference.New, properties.Options{DatabaseURL: db.URL})
}
