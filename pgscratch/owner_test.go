package pgscratch

import (
	"os"
	"os/exec"
	"testing"
)

// A run is gone only if its pid is dead in the same host and pid
// namespace: a container that shares the hostname has pids of its own.
func TestOwnerGoneNeedsTheSamePIDNamespace(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	me := thisRun()
	for _, c := range []struct {
		o    owner
		gone bool
	}{
		{owner{Host: host, PIDNS: me.PIDNS, PID: dead.Process.Pid}, true},
		{owner{Host: host, PIDNS: "other", PID: dead.Process.Pid}, false},
		{owner{Host: host, PIDNS: me.PIDNS, PID: os.Getpid()}, false},
		{owner{Host: "elsewhere", PIDNS: me.PIDNS, PID: dead.Process.Pid}, false},
		{owner{}, false},
	} {
		if got := c.o.gone(); got != c.gone {
			t.Errorf("%+v: gone %v, want %v", c.o, got, c.gone)
		}
	}
	me.Token = "abc"
	if o, body, ok := parseOwner(me.comment()); !ok || o.PIDNS != me.PIDNS || o.PID != me.PID || o.Host != me.Host || o.Token != "abc" || body != me.body() {
		t.Errorf("parseOwner(comment) = %+v, %q, %v; want %+v", o, body, ok, me)
	}
}
