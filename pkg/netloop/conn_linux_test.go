//go:build linux

package netloop

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// pair returns an adopted server-side Conn and the plain client side.
func pair(t *testing.T, l *Loop) (*Conn, net.Conn) {
	t.Helper()
	return pairWith(t, l, &net.Dialer{}, nil)
}

// pairWith is pair with the peer dialed by d and the accepted socket
// given to prep (when not nil) before the loop adopts it.
func pairWith(t *testing.T, l *Loop, d *net.Dialer, prep func(*net.TCPConn)) (*Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cl, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if prep != nil {
		prep(sc.(*net.TCPConn))
	}
	c, err := l.Adopt(sc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, cl
}

// newLoop starts a loop for a test; QPROUTER_IO_URING=1 gives it a ring
// (scripts/test runs the package both ways).
func newLoop(t *testing.T) *Loop {
	t.Helper()
	l, err := NewWith(Options{IOURing: os.Getenv("QPROUTER_IO_URING") == "1", RingBatch: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

func TestGoroutineReadWrite(t *testing.T) {
	l := newLoop(t)
	c, peer := pair(t, l)
	go func() {
		time.Sleep(20 * time.Millisecond) // Read waits first
		peer.Write([]byte("hello"))
	}()
	buf := make([]byte, 16)
	n, err := c.Read(buf)
	if err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	// A write larger than the socket buffers waits for the peer to read.
	big := bytes.Repeat([]byte("x"), 8<<20)
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(peer, int64(len(big))))
		got <- b
	}()
	if n, err := c.Write(big); err != nil || n != len(big) {
		t.Fatalf("write %d, %v", n, err)
	}
	if b := <-got; !bytes.Equal(b, big) {
		t.Fatalf("peer got %d bytes", len(b))
	}
	peer.Close()
	if _, err := c.Read(buf); err != io.EOF {
		t.Fatalf("read after peer close: %v, want EOF", err)
	}
}

func TestDeadlineAndClose(t *testing.T) {
	l := newLoop(t)
	c, _ := pair(t, l)
	c.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past deadline: %v", err)
	}
	c.SetReadDeadline(time.Time{})
	done := make(chan error)
	go func() {
		_, err := c.Read(make([]byte, 1))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	// A deadline set while Read waits ends the wait.
	c.SetReadDeadline(time.Unix(1, 0))
	if err := <-done; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read with deadline set meanwhile: %v", err)
	}
	c.SetReadDeadline(time.Time{})
	go func() {
		_, err := c.Read(make([]byte, 1))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	c.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read on close: %v", err)
	}
}

type recorder struct {
	c   *Conn
	got chan []byte
}

func (r *recorder) Ready(c *Conn) {
	buf := make([]byte, 4)
	for {
		n, err := c.Read(buf)
		if err == ErrWouldBlock {
			return
		}
		if err != nil {
			r.got <- nil
			c.SetHandler(nil)
			return
		}
		r.got <- append([]byte(nil), buf[:n]...)
	}
}

func TestHandler(t *testing.T) {
	l := newLoop(t)
	c, peer := pair(t, l)
	r := &recorder{c: c, got: make(chan []byte, 16)}
	// Whoever sets a handler runs it once: an edge may have come before.
	l.Post(func() { c.SetHandler(r); r.Ready(c) })
	peer.Write([]byte("abcdef"))
	var all []byte
	for len(all) < 6 {
		all = append(all, <-r.got...)
	}
	if string(all) != "abcdef" {
		t.Fatalf("handler read %q", all)
	}
	// The loop's writes never wait: what the socket refuses is kept.
	big := bytes.Repeat([]byte("y"), 8<<20)
	wrote := make(chan int)
	l.Post(func() {
		n, err := c.Write(big)
		if n != len(big) || err != nil {
			t.Errorf("Write: %d, %v", n, err)
		}
		// With a ring the bytes go at the end of this round: look in
		// the next one.
		l.Post(func() { wrote <- c.Pending() })
	})
	if p := <-wrote; p == 0 {
		t.Fatal("8 MiB written by the loop: nothing pending")
	}
	b, err := io.ReadAll(io.LimitReader(peer, int64(len(big))))
	if err != nil || !bytes.Equal(b, big) {
		t.Fatalf("peer got %d bytes, %v", len(b), err)
	}
	peer.Close()
	if b := <-r.got; b != nil {
		t.Fatalf("after the peer closed: %q", b)
	}
}

// TestMoveTo hands an idle socket to another loop, whose handler then
// gets its bytes.
func TestMoveTo(t *testing.T) {
	l1, l2 := newLoop(t), newLoop(t)
	c, peer := pair(t, l1)
	if err := c.MoveTo(l2); err != nil {
		t.Fatal(err)
	}
	if c.Loop() != l2 {
		t.Fatal("still on the first loop")
	}
	r := &recorder{c: c, got: make(chan []byte, 16)}
	onLoop := make(chan bool, 1)
	l2.Post(func() {
		onLoop <- l2.OnLoop() && !l1.OnLoop()
		c.SetHandler(r)
		r.Ready(c)
	})
	if !<-onLoop {
		t.Fatal("posted function not on the second loop's thread")
	}
	peer.Write([]byte("moved"))
	var all []byte
	for len(all) < 5 {
		all = append(all, <-r.got...)
	}
	if string(all) != "moved" {
		t.Fatalf("handler read %q", all)
	}
}

// panicky panics in Ready; as a Panicker it reports the panic.
type panicky struct{ told chan any }

func (p *panicky) Ready(c *Conn) {
	var b [8]byte
	if n, _ := c.Read(b[:]); n > 0 {
		panic("bad byte " + string(b[:n]))
	}
}

type panicker struct{ panicky }

func (p *panicker) Panicked(c *Conn, v any) { p.told <- v }

// A handler's panic and a posted function's panic are recovered: the
// Panicker is told, another handler's connection is closed, OnPanic gets
// a task's, and the loop goes on serving its other connections.
func TestPanicsRecovered(t *testing.T) {
	l := newLoop(t)
	tasks := make(chan any, 1)
	l.OnPanic(func(v any) { tasks <- v })

	c1, peer1 := pair(t, l)
	p := &panicker{panicky{told: make(chan any, 1)}}
	set := make(chan bool)
	l.Post(func() { c1.SetHandler(p); set <- true })
	<-set // the byte's edge then comes to the handler
	peer1.Write([]byte("x"))
	select {
	case v := <-p.told:
		if v != "bad byte x" {
			t.Fatalf("Panicked got %v", v)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Panicked not called")
	}

	c2, peer2 := pair(t, l)
	l.Post(func() { c2.SetHandler(&panicky{}); set <- true })
	<-set
	peer2.Write([]byte("y"))
	peer2.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := peer2.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("a plain handler's panic: its connection read %d, %v; want it closed", n, err)
	}

	l.Post(func() { panic("task") })
	if v := <-tasks; v != "task" {
		t.Fatalf("OnPanic got %v", v)
	}

	// Still serving.
	c3, peer3 := pair(t, l)
	r := &recorder{c: c3, got: make(chan []byte, 16)}
	l.Post(func() { c3.SetHandler(r); r.Ready(c3) })
	peer3.Write([]byte("ok"))
	if b := <-r.got; string(b) != "ok" {
		t.Fatalf("after the panics the loop read %q", b)
	}
}

// A socket's waiters are made when a goroutine first waits (a handler's
// never do). An edge that came before them is not lost: they start with
// both tokens; and a Close that came before them has closed them.
func TestWaitersMadeLate(t *testing.T) {
	l := newLoop(t)
	c, peer := pair(t, l)
	if c.w.Load() != nil {
		t.Fatal("waiters made at adoption")
	}
	if _, err := peer.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // the edge comes and finds no waiter
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if err := c.wait(true); err != nil {
		t.Fatalf("first wait after an edge: %v, want the token", err)
	}
	c.SetWriteDeadline(time.Now().Add(2 * time.Second))
	if err := c.wait(false); err != nil {
		t.Fatalf("first write wait: %v, want the token", err)
	}

	c2, _ := pair(t, l)
	c2.Close()
	select {
	case <-c2.waiting().closing:
	case <-time.After(2 * time.Second):
		t.Fatal("waiters made after Close are not closed")
	}
}
