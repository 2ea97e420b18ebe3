package faults_test

import (
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/faults"
)

// echoLink puts a Net with one link, "actor", in front of a fresh echo
// server. Close both (n.Close, then e.close) at the end.
func echoLink(t *testing.T) (*faults.Net, *echoServer, string) {
	t.Helper()
	e := startEcho(t)
	n := faults.NewNet(e.addr())
	addr, err := n.Link("actor")
	if err != nil {
		n.Close()
		e.close()
		t.Fatal(err)
	}
	return n, e, addr
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// echo writes s on c and reads it back within a second.
func echo(t *testing.T, c net.Conn, s string) {
	t.Helper()
	if _, err := c.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	expect(t, c, s, time.Second)
}

// expect reads exactly want from c within d.
func expect(t *testing.T, c net.Conn, want string, d time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, len(want))
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != want {
		t.Fatalf("read %q (%v), want %q", buf, err, want)
	}
}

// silent checks that nothing comes back on c for d.
func silent(t *testing.T, c net.Conn, d time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 1)
	if k, err := c.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read %q (%v) through a partition, want nothing", buf[:k], err)
	}
}

// ended checks that c is closed from the other side within d: EOF or a
// reset, not a timeout.
func ended(t *testing.T, c net.Conn, d time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 1)
	k, err := c.Read(buf)
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read %q (%v): the connection is still open, want it closed", buf[:k], err)
	}
}

// A short partition delays, never loses: the chunks sent while it lasts
// reach the server at the heal, in order, on the same connection, which
// then goes on.
func TestBlackholeHealDeliversHeldBytesInOrder(t *testing.T) {
	n, e, addr := echoLink(t)
	defer e.close()
	defer n.Close()
	c := dial(t, addr)
	defer c.Close()
	echo(t, c, "hello")
	if err := n.Inject("actor", faults.Fault{Kind: faults.Blackhole}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"one", "two", "three"} {
		if _, err := c.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // separate chunks
	}
	silent(t, c, 300*time.Millisecond)
	if got := e.received(); got != "hello" {
		t.Fatalf("the server received %q during the partition", got)
	}
	n.Heal("actor")
	expect(t, c, "onetwothree", 3*time.Second)
	echo(t, c, "after")
	if cov := n.Coverage()[faults.Blackhole]; cov.Struck != 1 || cov.Affected < 1 {
		t.Fatalf("coverage %+v: the held chunks are not counted", cov)
	}
	if per := n.LinkCoverage(); per["actor"][faults.Blackhole] != n.Coverage()[faults.Blackhole] || len(per) != 1 {
		t.Fatalf("per link %+v: not the link's own coverage", per)
	}
}

// Held chunks belong to their connection: one that closes during the
// partition loses them (they never reach the server), while another held
// through the same partition gets its own delivered at the heal.
func TestBlackholeDiscardsHeldBytesOfClosedConnection(t *testing.T) {
	n, e, addr := echoLink(t)
	defer e.close()
	defer n.Close()
	gone, kept := dial(t, addr), dial(t, addr)
	defer kept.Close()
	echo(t, gone, "a")
	echo(t, kept, "b")
	if err := n.Inject("actor", faults.Fault{Kind: faults.Blackhole}); err != nil {
		t.Fatal(err)
	}
	if _, err := gone.Write([]byte("lost")); err != nil {
		t.Fatal(err)
	}
	if _, err := kept.Write([]byte("kept")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	gone.Close()
	time.Sleep(200 * time.Millisecond) // the proxy sees the close before the heal
	n.Heal("actor")
	expect(t, kept, "kept", 3*time.Second)
	time.Sleep(200 * time.Millisecond)
	if got := e.received(); strings.Contains(got, "lost") {
		t.Fatalf("the server received %q: held bytes of a closed connection were sent", got)
	}
}

// A long partition ends the connections it touched at the heal, their
// held chunks never sent; a connection it held nothing of goes on, and new
// connections work.
func TestSeverHealClosesTouchedConnections(t *testing.T) {
	n, e, addr := echoLink(t)
	defer e.close()
	defer n.Close()
	touched, idle := dial(t, addr), dial(t, addr)
	defer touched.Close()
	defer idle.Close()
	echo(t, touched, "a")
	echo(t, idle, "b")
	if err := n.Inject("actor", faults.Fault{Kind: faults.Sever}); err != nil {
		t.Fatal(err)
	}
	if _, err := touched.Write([]byte("lost")); err != nil {
		t.Fatal(err)
	}
	silent(t, touched, 200*time.Millisecond)
	n.Heal("actor")
	ended(t, touched, 2*time.Second)
	echo(t, idle, "idle goes on")
	fresh := dial(t, addr)
	defer fresh.Close()
	echo(t, fresh, "fresh")
	if got := e.received(); strings.Contains(got, "lost") {
		t.Fatalf("the server received %q: a severed connection's held bytes were sent", got)
	}
	if cov := n.Coverage()[faults.Sever]; cov.Injected != 1 || cov.Struck != 1 || cov.Affected < 1 {
		t.Fatalf("coverage %+v: the sever is not counted", cov)
	}
}
