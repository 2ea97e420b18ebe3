// Package leakcheck checks that a test leaves no goroutine behind, giving
// goroutines that are on their way out a few seconds (goleak's own retries
// last well under one, shorter than a toxic's bounded send).
package leakcheck

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Grace is how long goroutines may take to end.
const Grace = 5 * time.Second

// Start records the goroutines running now; the returned function, to
// defer, fails t if others are still running after Grace.
func Start(t testing.TB, opts ...goleak.Option) func() {
	opts = append(opts, goleak.IgnoreCurrent())
	return func() {
		t.Helper()
		deadline := time.Now().Add(Grace)
		for {
			err := goleak.Find(opts...)
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("goroutines left behind after %v: %v", Grace, err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
