package loopcheck_test

import (
	"context"
	"strings"
	"testing"

	"github.com/outboxcheck/outboxcheck/adapters/refloop"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// panicky is the reference whose relay 1 panics at once.
type panicky struct{ loopcheck.Subject }

func (p panicky) Dispatch(ctx context.Context, i int, pub harness.Publisher) error {
	if i == 1 {
		var m map[string]int
		m["boom"]++ // a nil map: the relay's goroutine panics
	}
	return p.Subject.Dispatch(ctx, i, pub)
}

// A relay whose Dispatch panics ends the run with relay-liveness and the
// panic's message, not the harness's process with a stack dump.
func TestDispatchPanicIsTheRelaysEnd(t *testing.T) {
	newPanicky := func(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
		s, err := refloop.New(ctx, env)
		if s == nil {
			return nil, err
		}
		return panicky{s}, err
	}
	opts := loopcheck.Options{DatabaseURL: pgscratch.NewDatabase(t).URL, Recovery: refloop.Recovery}
	n, f, err := loopcheck.Replay(newPanicky, opts, loopcheck.Schedule{{Kind: "commit"}, {Kind: "pause", For: 1e8}}, "relay-liveness", 1)
	if err != nil || n != 1 || !strings.Contains(f.Message, "Dispatch panicked: assignment to entry in nil map") {
		t.Fatalf("relay-liveness %d of 1 (%v): %+v", n, err, f)
	}
}
