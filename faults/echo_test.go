package faults_test

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"
)

// echoServer is a TCP echo server on loopback that records every byte it
// receives, on any connection, in arrival order.
type echoServer struct {
	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	got   bytes.Buffer
	conns []net.Conn
}

// startEcho starts an echo server; stop it with close.
func startEcho(t *testing.T) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &echoServer{ln: ln}
	e.wg.Go(e.accept)
	return e
}

func (e *echoServer) addr() string { return e.ln.Addr().String() }

func (e *echoServer) accept() {
	for {
		c, err := e.ln.Accept()
		if err != nil {
			return
		}
		e.mu.Lock()
		e.conns = append(e.conns, c)
		e.mu.Unlock()
		e.wg.Go(func() { _, _ = io.Copy(c, io.TeeReader(c, e)) })
	}
}

// Write records bytes received (the tee of every connection).
func (e *echoServer) Write(b []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.got.Write(b)
}

// received is every byte the server has received so far.
func (e *echoServer) received() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.got.String()
}

func (e *echoServer) close() {
	e.ln.Close()
	e.mu.Lock()
	for _, c := range e.conns {
		c.Close()
	}
	e.mu.Unlock()
	e.wg.Wait()
}
