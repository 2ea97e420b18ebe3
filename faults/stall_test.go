package faults_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/internal/leakcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// stalls records what a watcher is told.
type stalls struct {
	mu    sync.Mutex
	until []time.Time
}

func (s *stalls) tell(until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.until = append(s.until, until)
}

// first waits up to d for the first thing told.
func (s *stalls) first(t *testing.T, d time.Duration) time.Time {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		s.mu.Lock()
		if len(s.until) > 0 {
			u := s.until[0]
			s.mu.Unlock()
			return u
		}
		s.mu.Unlock()
	}
	t.Fatalf("the watcher was told nothing in %v", d)
	return time.Time{}
}

func (s *stalls) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.until)
}

// A request a partition holds is told to the link's watcher as stalled
// until the heal, at once, not at the caller's deadline; the heal then
// answers it as before (watching changes nothing the fault does).
func TestWatchToldOfHeldRequest(t *testing.T) {
	db := pgscratch.NewDatabase(t)
	defer leakcheck.Start(t)()
	n, addr := pgLink(t, db.URL)
	defer n.Close()
	c := connect(t, through(t, db.URL, addr))
	defer c.Close(context.Background())
	var s stalls
	stop, err := n.Watch("actor", s.tell)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := n.Inject("actor", faults.Fault{Kind: faults.Blackhole}); err != nil {
		t.Fatal(err)
	}
	done := exec(c, "SELECT 1", 5*time.Second)
	if u := s.first(t, time.Second); !u.Equal(faults.Forever) {
		t.Fatalf("told the held request is answered at %v, want Forever (the heal)", u)
	}
	n.Heal("actor")
	if err := <-done; err != nil {
		t.Fatalf("the held query got no answer after the heal: %v", err)
	}
}

// A request a delay forwards late is told with the instant it goes on;
// once stop is called the watcher hears nothing more.
func TestWatchToldOfDelayedRequest(t *testing.T) {
	db := pgscratch.NewDatabase(t)
	defer leakcheck.Start(t)()
	n, addr := pgLink(t, db.URL)
	defer n.Close()
	c := connect(t, through(t, db.URL, addr))
	defer c.Close(context.Background())
	var s stalls
	stop, err := n.Watch("actor", s.tell)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Inject("actor", faults.Fault{Kind: faults.Latency, DelayMs: 300}); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	done := exec(c, "SELECT 1", 5*time.Second)
	u := s.first(t, time.Second)
	if d := u.Sub(sent); d < 300*time.Millisecond {
		t.Fatalf("told the delayed request goes on %v after it was sent, want its delay (300ms) or more", d)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	stop()
	told := s.count()
	if err := <-exec(c, "SELECT 2", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if s.count() != told {
		t.Fatal("the watcher was told of a request after stop")
	}
	n.Heal("actor")
}
