package impl_test

import (
	"sync"
	"testing"
)

// Two dispatchers claiming at once (real goroutines, own sessions) never get
// the same event: FOR UPDATE SKIP LOCKED splits the work. Run with -race.
func TestConcurrentDispatchersNeverClaimTheSameEvent(t *testing.T) {
	w := newWorld(t)
	const events = 300
	for i := range events {
		w.pay(i)
	}
	claimed := make([][]string, 2)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for i := range claimed {
		d := w.dispatcher()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				got, err := d.Claim(w.ctx, 7)
				if err != nil {
					errs <- err
					return
				}
				if len(got) == 0 {
					return
				}
				for _, c := range got {
					claimed[i] = append(claimed[i], c.ID)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for i, ids := range claimed {
		for _, id := range ids {
			if other, dup := seen[id]; dup {
				t.Fatalf("event %s claimed by dispatcher %d and %d", id, other, i)
			}
			seen[id] = i
		}
	}
	if len(seen) != events {
		t.Fatalf("claimed %d distinct events, want %d", len(seen), events)
	}
	t.Logf("dispatcher 0 claimed %d, dispatcher 1 claimed %d", len(claimed[0]), len(claimed[1]))
	if len(claimed[0]) == 0 || len(claimed[1]) == 0 {
		t.Log("one dispatcher did all the work; the race was not exercised this run")
	}
}
