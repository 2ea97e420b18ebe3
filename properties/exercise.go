package properties

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/outboxcheck/outboxcheck/model"
)

// Options tune a run. The zero value is filled by defaults.
type Options struct {
	// DatabaseURL is the run's database (see internal/pgprov). Required.
	DatabaseURL string
	// Policy is what the subject must implement. Default: the seed's lease
	// (1 min) and backoff (2^min(attempts,10) s) but DEAD at 3 attempts, so
	// that checks of ~30 steps reach DEAD.
	Policy model.Policy
	// Dispatchers and Consumers: default 2 each.
	Dispatchers, Consumers int
	// MaxBatch is the largest claim limit drawn. Default 3.
	MaxBatch int
	// CallTimeout bounds every subject call. Default 10 s.
	CallTimeout time.Duration
	// Start is the harness clock's first instant. Default 2026-01-01 UTC.
	Start time.Time
	// OnCheck, if set, receives each check's history when it ends.
	OnCheck func(*History)
}

func (o Options) withDefaults() Options {
	if o.Policy == (model.Policy{}) {
		o.Policy = model.SeedPolicy()
		o.Policy.MaxAttempts = 3
	}
	if o.Dispatchers == 0 {
		o.Dispatchers = 2
	}
	if o.Consumers == 0 {
		o.Consumers = 2
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = 3
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = 10 * time.Second
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return o
}

// Exercise checks a subject with rapid: each check resets the subject,
// runs a random sequence of actions with the safety properties after each,
// drains, and checks liveness. It fails t with the shrunk counterexample.
func Exercise(t *testing.T, newSubject NewSubject, opts Options) {
	t.Helper()
	Run(t, newSubject, opts)
}

// Run is Exercise for any rapid.TB (a CLI supplies its own).
func Run(tb rapid.TB, newSubject NewSubject, opts Options) {
	tb.Helper()
	opts = opts.withDefaults()
	if opts.DatabaseURL == "" {
		tb.Fatalf("infrastructure error: properties: Options.DatabaseURL is required")
		return
	}
	ctx := context.Background()
	var ids atomic.Uint64
	env := Env{
		ConnString:  func(Actor) string { return opts.DatabaseURL },
		NewID:       func() string { return fmt.Sprintf("00000000-0000-4000-8000-%012x", ids.Add(1)) },
		Policy:      opts.Policy,
		Dispatchers: opts.Dispatchers,
		Consumers:   opts.Consumers,
	}
	setup, cancel := context.WithTimeout(ctx, time.Minute)
	subj, err := newSubject(setup, env)
	cancel()
	if err != nil {
		tb.Fatalf("infrastructure error: build subject: %v", err)
		return
	}
	defer subj.Close()
	rapid.Check(tb, func(t *rapid.T) {
		m := newMachine(ctx, opts, subj, opts.Start)
		ids.Store(0)
		if err := m.do(subj.Reset); err != nil {
			m.infra(t, "reset", err)
		}
		if opts.OnCheck != nil {
			defer func() { opts.OnCheck(m.hist) }()
		}
		t.Repeat(m.actions())
		m.drain(t)
	})
}

// weights say how often rapid should pick each action relative to the
// others: the verbs where the outbox's bugs live come up more often.
var weights = map[string]int{
	"Commit": 3, "Claim": 3, "Publish": 3, "MarkPublished": 3, "MarkFailed": 2,
	"AdvanceClock": 3, "Deliver": 2, "CrashDispatcher": 1, "RestartDispatcher": 1,
	"CrashConsumer": 1, "Rollback": 1, "Redrive": 1, "Cleanup": 1,
}

// actions lists the state machine's actions; each is its own entry so
// shrinking can drop it. An action of weight w is listed w times (as
// "Name", "Name#2", …) because rapid picks keys uniformly.
func (m *machine) actions() map[string]func(*rapid.T) {
	byName := map[string]func(*rapid.T){
		"Commit": m.Commit, "Rollback": m.Rollback, "Claim": m.Claim, "Publish": m.Publish,
		"MarkPublished": m.MarkPublished, "MarkFailed": m.MarkFailed, "AdvanceClock": m.AdvanceClock,
		"CrashDispatcher": m.CrashDispatcher, "RestartDispatcher": m.RestartDispatcher,
		"Deliver": m.Deliver, "CrashConsumer": m.CrashConsumer, "Redrive": m.Redrive, "Cleanup": m.Cleanup,
	}
	out := map[string]func(*rapid.T){"": m.Check}
	for name, fn := range byName {
		out[name] = fn
		for i := 2; i <= weights[name]; i++ {
			out[fmt.Sprintf("%s#%d", name, i)] = fn
		}
	}
	return out
}
