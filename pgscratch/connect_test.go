package pgscratch

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
)

// A server that takes the connection and never answers is tried
// connectAttempts times (a loaded machine's backend may take seconds to
// start); one that refuses is tried once.
func TestConnectRetriesOnlyASilentServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			held = append(held, c) // never answered
		}
	}()
	_, err = connect(context.Background(), "postgres://postgres@"+ln.Addr().String()+"/postgres?sslmode=disable")
	if err == nil || !timedOut(err) || accepted.Load() != connectAttempts {
		t.Errorf("a silent server: %v after %d attempts, want a timeout after %d", err, accepted.Load(), connectAttempts)
	}
	ln.Close()
	<-done
	for _, c := range held {
		c.Close()
	}

	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	free.Close() // nothing listens there now: refused
	if _, err := connect(context.Background(), "postgres://postgres@"+addr+"/postgres?sslmode=disable"); err == nil || timedOut(err) {
		t.Errorf("a refused connection: %v, want a refusal, not retried to a timeout", err)
	}
}
