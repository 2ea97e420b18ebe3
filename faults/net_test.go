package faults_test

import (
	"sync"
	"testing"

	"github.com/outboxcheck/outboxcheck/faults"
)

// A link's address is asked for from the subject's goroutines while the
// harness cuts that link (a crash). It stays the same, and asking does not
// race with the proxy's restart (run with -race).
func TestLinkDuringCut(t *testing.T) {
	n := faults.NewNet("127.0.0.1:1") // nothing is dialled
	defer n.Close()
	addr, err := n.Link("dispatcher-0")
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var asked int
	var other string
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			a, err := n.Link("dispatcher-0")
			if err != nil {
				t.Error(err)
				return
			}
			asked++
			if a != addr {
				other = a
			}
		}
	})
	for range 20 {
		if err := n.Cut("dispatcher-0"); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if other != "" {
		t.Fatalf("link address changed across cuts: %s, then %s", addr, other)
	}
	if asked == 0 {
		t.Fatal("the address was never asked for during the cuts")
	}
}
