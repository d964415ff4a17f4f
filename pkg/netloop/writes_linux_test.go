//go:build linux

package netloop

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// ringLoop starts a loop with an io_uring, or skips where the kernel
// has none. Its flushes use the ring even for one socket.
func ringLoop(t *testing.T) *Loop {
	t.Helper()
	l, err := NewWith(Options{IOURing: true, RingBatch: 1})
	if errors.Is(err, ErrNoRing) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

// onLoop runs f on l's thread and waits for it.
func onLoop(l *Loop, f func()) {
	done := make(chan struct{})
	l.Post(func() { f(); close(done) })
	<-done
}

// deferFunc is a Deferred from a function.
type deferFunc func()

func (f deferFunc) RunDeferred() { f() }

func readN(t *testing.T, c net.Conn, n int) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, n)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatalf("peer read: %v", err)
	}
	return b
}

// A handler's writes with a ring go out at the end of the round, in
// order with what a goroutine writes once the handler is gone, and
// before a deferred function runs.
func TestRingWritesInOrder(t *testing.T) {
	l := ringLoop(t)
	c, peer := pair(t, l)
	r := &recorder{c: c, got: make(chan []byte, 16)}
	seen := make(chan []byte, 1)
	onLoop(l, func() {
		c.SetHandler(r)
		c.Write([]byte("one,"))
		c.Write([]byte("two,"))
		if p := c.Pending(); p != 0 {
			t.Errorf("queued for the round's end, yet %d pending", p)
		}
		l.Defer(deferFunc(func() {
			// Deferred work runs after the round's writes left: the
			// peer has them. (Not readN: no t.Fatal off the test's
			// goroutine.)
			peer.SetReadDeadline(time.Now().Add(2 * time.Second))
			b := make([]byte, 8)
			n, _ := io.ReadFull(peer, b)
			seen <- b[:n]
		}))
	})
	if got := <-seen; string(got) != "one,two," {
		t.Fatalf("peer got %q before the deferred function", got)
	}
	onLoop(l, func() {
		c.Write([]byte("three,"))
		c.SetHandler(nil) // the rest is a goroutine's
	})
	if _, err := c.Write([]byte("four")); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, peer, 10); string(got) != "three,four" {
		t.Fatalf("peer got %q", got)
	}
}

// A handler that writes and closes in one round: the bytes reach the peer
// before the end of the stream.
func TestRingWriteThenClose(t *testing.T) {
	l := ringLoop(t)
	c, peer := pair(t, l)
	onLoop(l, func() {
		c.SetHandler(&recorder{c: c, got: make(chan []byte, 16)})
		c.Write([]byte("FATAL: bye"))
		c.Close()
	})
	peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(peer)
	if err != nil || string(b) != "FATAL: bye" {
		t.Fatalf("peer got %q, %v", b, err)
	}
}

// A send that overflows the socket: the rest waits (Pending counts it) and
// goes as the peer reads; 32 MiB arrive whole and in order.
func TestRingBackpressure(t *testing.T) {
	l := ringLoop(t)
	c, peer := pair(t, l)
	big := make([]byte, 32<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	pending := make(chan int, 1)
	onLoop(l, func() {
		c.SetHandler(&recorder{c: c, got: make(chan []byte, 16)})
		c.Write(big[:16<<20])
		c.Write(big[16<<20:])
		l.Post(func() { pending <- c.Pending() })
	})
	if p := <-pending; p == 0 {
		t.Fatal("32 MiB to a peer that reads nothing: nothing pending")
	}
	got := readN(t, peer, len(big))
	if !bytes.Equal(got, big) {
		t.Fatal("the peer's bytes differ from those written")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var p int
		onLoop(l, func() { p = c.Pending() })
		if p == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still pending after the peer read all", p)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Once a send fails (the peer reset the connection), later writes fail
// too, and the handler hears of it.
func TestRingSendFails(t *testing.T) {
	l := ringLoop(t)
	c, peer := pair(t, l)
	peer.(*net.TCPConn).SetLinger(0)
	peer.Close() // RST
	time.Sleep(50 * time.Millisecond)
	errc := make(chan error, 1)
	var try func()
	n := 0
	try = func() {
		if _, err := c.Write(bytes.Repeat([]byte("x"), 1<<16)); err != nil {
			errc <- err
			return
		}
		if n++; n > 200 {
			errc <- nil
			return
		}
		l.Post(try) // next round, after this one's send failed
	}
	l.Post(func() {
		c.SetHandler(&recorder{c: c, got: make(chan []byte, 16)})
		try()
	})
	if err := <-errc; err == nil {
		t.Fatal("writes to a reset connection kept succeeding")
	}
}

// Writes to many sockets in one round go out in one submission, each
// to its own peer, in order, over several rounds.
func TestRingManySockets(t *testing.T) {
	l := ringLoop(t)
	onLoop(l, func() { l.ringMin = 2 }) // as in production
	const n = 40
	conns := make([]*Conn, n)
	peers := make([]net.Conn, n)
	for i := range conns {
		conns[i], peers[i] = pair(t, l)
	}
	for round := range 3 {
		onLoop(l, func() {
			for i, c := range conns {
				c.SetHandler(&recorder{c: c, got: make(chan []byte, 16)})
				c.Write([]byte{byte('a' + round), byte(i)})
				c.Write([]byte{byte('A' + round), byte(i)})
			}
		})
	}
	for i, p := range peers {
		got := readN(t, p, 12)
		want := []byte{'a', byte(i), 'A', byte(i), 'b', byte(i), 'B', byte(i), 'c', byte(i), 'C', byte(i)}
		if !bytes.Equal(got, want) {
			t.Fatalf("peer %d got %q, want %q", i, got, want)
		}
	}
}
