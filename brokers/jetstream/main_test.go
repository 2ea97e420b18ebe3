package jetstream_test

import (
	"testing"

	"go.uber.org/goleak"
)

// No goroutine of the server, the link or a publisher outlives the
// tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
