package rawconn

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// accepted is a connection accepted through Listen from ln, with the
// dialled peer.
func accepted(t *testing.T, l net.Listener) (net.Conn, net.Conn) {
	t.Helper()
	got := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			t.Error(err)
		}
		got <- c
	}()
	peer, err := net.Dial(l.Addr().Network(), l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := <-got
	if c == nil {
		t.FailNow()
	}
	t.Cleanup(func() { c.Close(); peer.Close() })
	return c, peer
}

func sockopt(t *testing.T, c net.Conn, level, opt int) int {
	t.Helper()
	rc, err := c.(*Conn).Conn.(*fileConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	rc.Control(func(fd uintptr) { v, gerr = syscall.GetsockoptInt(int(fd), level, opt) })
	if gerr != nil {
		t.Fatal(gerr)
	}
	return v
}

// A TCP connection accepted raw has the peer's and its own address, the
// socket options net would set, carries bytes both ways, honours read
// deadlines and reports EOF and closing as net does.
func TestListenerTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Listen(ln, true)
	if _, ok := l.(*Listener); !ok {
		t.Fatalf("Listen did not wrap a %T", ln)
	}
	defer l.Close()
	c, peer := accepted(t, l)
	if _, ok := c.(*Conn); !ok {
		t.Fatalf("Accept returned %T", c)
	}
	if got, want := c.RemoteAddr().String(), peer.LocalAddr().String(); got != want {
		t.Errorf("RemoteAddr %s, the peer is %s", got, want)
	}
	if got, want := c.LocalAddr().String(), peer.RemoteAddr().String(); got != want {
		t.Errorf("LocalAddr %s, the peer dialled %s", got, want)
	}
	if sockopt(t, c, syscall.IPPROTO_TCP, syscall.TCP_NODELAY) == 0 {
		t.Error("TCP_NODELAY is off")
	}
	if sockopt(t, c, syscall.SOL_SOCKET, syscall.SO_KEEPALIVE) == 0 {
		t.Error("SO_KEEPALIVE is off")
	}

	if _, err := peer.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("read %q, %v", buf, err)
	}
	if _, err := c.Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(peer, buf); err != nil || string(buf) != "pong" {
		t.Fatalf("peer read %q, %v", buf, err)
	}

	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err = c.Read(buf)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v, want a timeout", err)
	}
	c.SetReadDeadline(time.Time{})

	peer.Close()
	if _, err := c.Read(buf); err != io.EOF {
		t.Fatalf("read after the peer closed: %v, want io.EOF", err)
	}

	// A read under way when the connection is closed ends with net.ErrClosed.
	c2, _ := accepted(t, l)
	errc := make(chan error, 1)
	go func() {
		_, err := c2.Read(buf)
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	c2.Close()
	if err := <-errc; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read on a closed connection: %v, want net.ErrClosed", err)
	}
}

// A wildcard listener reports the address the client reached.
func TestListenerWildcard(t *testing.T) {
	ln, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	l := Listen(ln, false)
	go func() {
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			time.Sleep(100 * time.Millisecond)
			c.Close()
		}
	}()
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, want := c.LocalAddr().String(), net.JoinHostPort("127.0.0.1", strconv.Itoa(port)); got != want {
		t.Errorf("LocalAddr %s, want %s", got, want)
	}
	if sockopt(t, c, syscall.SOL_SOCKET, syscall.SO_KEEPALIVE) != 0 {
		t.Error("SO_KEEPALIVE is on though not asked for")
	}
}

// Other listeners are left as they are.
func TestListenerUnix(t *testing.T) {
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if Listen(ln, true) != ln {
		t.Fatal("a unix listener was wrapped")
	}
}

// Closing the listener ends a waiting Accept with net.ErrClosed, which is
// what a server's accept loop stops on.
func TestListenerClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Listen(ln, true)
	errc := make(chan error, 1)
	go func() {
		_, err := l.Accept()
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	l.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Accept after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Accept still waiting 5 s after Close")
	}
}
