package faults_test

import (
	"errors"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"
)

// refused checks that connecting to addr is refused at once: a killed
// actor's link is not a blackhole, nothing waits for a timeout.
func refused(t *testing.T, addr string) {
	t.Helper()
	start := time.Now()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		c.Close()
		t.Fatalf("connected to %s, want the connection refused", addr)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) || time.Since(start) > 500*time.Millisecond {
		t.Fatalf("dial %s after %v: %v, want ECONNREFUSED at once", addr, time.Since(start), err)
	}
}

// Down is a killed actor's link: its connections drop, new ones are
// refused until Up, and neither Cut nor Heal brings it back. Up opens it
// again on the same address.
func TestDownRefusesUntilUp(t *testing.T) {
	n, e, addr := echoLink(t)
	defer e.close()
	defer n.Close()
	c := dial(t, addr)
	defer c.Close()
	echo(t, c, "before")
	if err := n.Down("actor"); err != nil {
		t.Fatal(err)
	}
	ended(t, c, 2*time.Second)
	refused(t, addr)
	if !n.IsDown("actor") {
		t.Fatal("IsDown is false after Down")
	}
	if err := n.Cut("actor"); err != nil {
		t.Fatal(err)
	}
	n.Heal("actor")
	refused(t, addr)
	if !n.IsDown("actor") {
		t.Fatal("Cut or Heal brought the link up")
	}
	for range 2 { // the second Up is a no-op
		if err := n.Up("actor"); err != nil {
			t.Fatal(err)
		}
	}
	if again, err := n.Link("actor"); err != nil || again != addr {
		t.Fatalf("address after Up: %s (%v), want %s", again, err, addr)
	}
	if n.IsDown("actor") {
		t.Fatal("IsDown is true after Up")
	}
	c2 := dial(t, addr)
	defer c2.Close()
	echo(t, c2, "after")
}

// Close stops a link that is down as well as one that is up.
func TestCloseWithLinkDown(t *testing.T) {
	n, e, addr := echoLink(t)
	defer e.close()
	other, err := n.Link("other")
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Down("actor"); err != nil {
		t.Fatal(err)
	}
	n.Close()
	refused(t, addr)
	refused(t, other)
	if err := n.Up("actor"); err == nil {
		t.Fatal("Up after Close brought a forgotten link up")
	}
	refused(t, addr)
}

// Cut, Heal, Link and IsDown run from other goroutines while the harness
// takes the link down and up (a crash and a restart): a Cut never brings a
// link up that Down took down, and nothing races (run with -race).
func TestDownHoldsAgainstConcurrentCuts(t *testing.T) {
	n, e, addr := echoLink(t)
	defer e.close()
	defer n.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	halt := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer halt()
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := n.Cut("actor"); err != nil {
					t.Error(err)
					return
				}
				n.Heal("actor")
				_ = n.IsDown("actor")
				if a, err := n.Link("actor"); err != nil || a != addr {
					t.Errorf("Link = %s (%v), want %s", a, err, addr)
					return
				}
			}
		})
	}
	for range 10 {
		if err := n.Down("actor"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // let the cuts run against it
		refused(t, addr)
		if err := n.Up("actor"); err != nil {
			t.Fatal(err)
		}
	}
	halt()
	c := dial(t, addr)
	defer c.Close()
	echo(t, c, "up")
}
