//go:build linux

package netloop

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

// TestNetloopReviewReadPastDeadline: net.Conn's contract, which *net.TCPConn
// keeps: once the read deadline has passed, Read fails with
// os.ErrDeadlineExceeded, even with bytes waiting.
func TestNetloopReviewReadPastDeadline(t *testing.T) {
	// The runtime's own socket, for reference.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cl, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	cl.Write([]byte("x"))
	time.Sleep(20 * time.Millisecond)
	sc.SetReadDeadline(time.Unix(1, 0))
	if _, err := sc.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("reference *net.TCPConn: %v", err)
	}

	l := newLoop(t)
	c, peer := pair(t, l)
	peer.Write([]byte("x"))
	time.Sleep(20 * time.Millisecond)
	c.SetReadDeadline(time.Unix(1, 0))
	n, err := c.Read(make([]byte, 1))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read after the deadline passed: %d bytes, %v; want os.ErrDeadlineExceeded as *net.TCPConn", n, err)
	}
}

// TestNetloopReviewWritePastDeadline: likewise for Write.
func TestNetloopReviewWritePastDeadline(t *testing.T) {
	l := newLoop(t)
	c, _ := pair(t, l)
	c.SetWriteDeadline(time.Unix(1, 0))
	n, err := c.Write([]byte("x"))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Write after the deadline passed: %d bytes, %v; want os.ErrDeadlineExceeded as *net.TCPConn", n, err)
	}
}

// TestNetloopReviewAdoptFailureKeepsConn: callers (proxy.go's client adoption,
// pool.adoptConn) go on with the original net.Conn when Adopt fails; a
// failed Adopt must leave it open.
func TestNetloopReviewAdoptFailureKeepsConn(t *testing.T) {
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cl, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	l.Close() // a loop that cannot take the socket (shut down; or epoll_ctl failing)
	if _, err := l.Adopt(sc); err == nil {
		t.Fatal("Adopt on a closed loop succeeded")
	}
	if _, err := sc.Write([]byte("ok")); err != nil {
		t.Fatalf("the connection Adopt refused to take is unusable: %v", err)
	}
	cl.SetReadDeadline(time.Now().Add(2 * time.Second))
	b := make([]byte, 2)
	if n, err := cl.Read(b); err != nil || string(b[:n]) != "ok" {
		t.Fatalf("peer read %q, %v", b[:n], err)
	}
}
