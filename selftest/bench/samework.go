package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// The same work, bare: the bare rate of BareOps is four verbs on warm
// sessions, which is not what a check's steps do (they roll back, redrive,
// clean up, and reconnect after every crash to a backend that has read no
// catalog yet). So the fault-free run is also recorded call by call, and
// the recording replayed straight through a new subject on a fresh
// database: the subject's own calls in the same order with the same
// arguments, ids and failpoint outcomes, and no harness around them (no
// rapid, no model, no read-back, no history, no deadline). Its time is
// what the same work costs bare.

// CallLog is a recorded run: what the subject was asked to do, in order.
type CallLog struct {
	env   stepcheck.Env // the counts and semantics the run built its subjects with
	calls []replayCall
	ids   []string // every id the subjects took from Env.NewID, in order
}

// replayCall is one recorded call. ops is how many database operations it
// counts as: 1, or 0 for Publish (the harness's broker) and Crash.
type replayCall struct {
	ops  int
	fail bool // the recorded call returned an error
	run  func(ctx context.Context, s stepcheck.Subject) error
	new  bool // a new subject was built here
}

// Record wraps newSubject so that every subject it builds logs its calls.
func (l *CallLog) Record(newSubject stepcheck.NewSubject) stepcheck.NewSubject {
	return func(ctx context.Context, env stepcheck.Env) (stepcheck.Subject, error) {
		l.env = env
		newID := env.NewID
		env.NewID = func() string {
			id := newID()
			l.ids = append(l.ids, id)
			return id
		}
		l.calls = append(l.calls, replayCall{new: true})
		s, err := newSubject(ctx, env)
		if err != nil {
			return nil, err
		}
		rec := &recording{Subject: s, log: l}
		if _, ok := s.(stepcheck.ReadBacker); ok {
			return readingBack{rec}, nil
		}
		return rec, nil
	}
}

// Replay builds a subject with newSubject on the database at dbURL and
// makes the recorded calls on it. It returns the database operations and
// the time they took, subject builds included, as the run's time does. A
// call whose error (or its absence) differs from the recording is an
// error: the replay would not be the same work.
func (l *CallLog) Replay(ctx context.Context, dbURL string, newSubject stepcheck.NewSubject) (Bare, error) {
	env := l.env
	env.ConnString = func(harness.Actor) string { return dbURL }
	next := 0
	env.NewID = func() string {
		if next >= len(l.ids) {
			next++
			return fmt.Sprintf("replay-extra-%d", next)
		}
		next++
		return l.ids[next-1]
	}
	env.Broker = accepting{}
	var s stepcheck.Subject
	defer func() {
		if s != nil {
			s.Close()
		}
	}()
	var b Bare
	start := time.Now()
	for i, c := range l.calls {
		cctx, cancel := context.WithTimeout(ctx, replayCallTimeout)
		if c.new {
			if s != nil {
				s.Close()
			}
			var err error
			s, err = newSubject(cctx, env)
			cancel()
			if err != nil {
				return Bare{}, fmt.Errorf("replay: new subject: %w", err)
			}
			continue
		}
		err := c.run(cctx, s)
		cancel()
		if (err != nil) != c.fail {
			return Bare{}, fmt.Errorf("replay: call %d of %d diverged from the recording: error %v, recorded failing: %v", i, len(l.calls), err, c.fail)
		}
		b.Ops += c.ops
	}
	b.Took = time.Since(start)
	if next != len(l.ids) {
		return Bare{}, fmt.Errorf("replay: the subject took %d ids, the recording %d", next, len(l.ids))
	}
	return b, nil
}

// replayCallTimeout bounds every replayed call, as the harness's deadline
// bounds its calls (more loosely: a slow call is timed, not failed).
const replayCallTimeout = 5 * time.Second

// accepting is a broker that acknowledges everything at once.
type accepting struct{}

func (accepting) Publish(context.Context, harness.Message) error { return nil }

// sameWork measures the fault-free throughput as measure does, and the
// same work bare: the run's calls replayed on a fresh database.
func sameWork(ctx context.Context, c *pgscratch.Server, b harness.Budget) (Throughput, Bare, error) {
	var l CallLog
	t, err := measureWith(ctx, c, false, b, stepcheck.DrawSwarm, l.Record(reference.New))
	if err != nil {
		return t, Bare{}, err
	}
	db, err := c.NewDatabase(ctx)
	if err != nil {
		return t, Bare{}, err
	}
	defer db.Drop(context.WithoutCancel(ctx))
	bare, err := l.Replay(ctx, db.URL, reference.New)
	return t, bare, err
}
