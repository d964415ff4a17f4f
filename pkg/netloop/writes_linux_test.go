//go:build linux

package netloop

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"syscall"
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

// collector is a handler that keeps everything it reads, and nil at the
// end of the stream.
type collector struct {
	c    *Conn
	buf  []byte
	done chan []byte
}

func (h *collector) Ready(c *Conn) {
	b := make([]byte, 4096)
	for {
		n, err := c.Read(b)
		h.buf = append(h.buf, b[:n]...)
		if err == ErrWouldBlock {
			return
		}
		if err != nil {
			c.SetHandler(nil)
			h.done <- h.buf
			return
		}
	}
}

// Through a small socket buffer a ring send goes in part: the rest
// follows as the peer reads, in order. And 300 KB sent to the loop come
// to its handler whole through its receives (32 KiB at most each) and
// the reads after a full one.
func TestRingPartialSendAndLongRead(t *testing.T) {
	l := ringLoop(t)
	// Small buffers from before the connection, so that the window is
	// small too.
	small := func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) {
			syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
			syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, 4096)
		})
	}
	c, peer := pairWith(t, l, &net.Dialer{Control: small}, func(sc *net.TCPConn) { sc.SetWriteBuffer(4096) })
	out := make([]byte, 60000) // below queueMax: one ring send
	for i := range out {
		out[i] = byte(i * 13)
	}
	h := &collector{c: c, done: make(chan []byte, 1)}
	pending := make(chan int, 1)
	onLoop(l, func() {
		c.SetHandler(h)
		c.Write(out)
		l.Post(func() { pending <- c.Pending() })
	})
	if p := <-pending; p == 0 {
		t.Error("60000 bytes through a 4 KiB socket buffer: nothing pending after the send")
	}
	if got := readN(t, peer, len(out)); !bytes.Equal(got, out) {
		t.Fatal("the peer's bytes differ from those written")
	}
	in := make([]byte, 300000)
	for i := range in {
		in[i] = byte(i * 7)
	}
	go func() {
		peer.Write(in)
		peer.Close()
	}()
	select {
	case got := <-h.done:
		if !bytes.Equal(got, in) {
			t.Fatalf("the handler read %d bytes, not the %d sent (or other ones)", len(got), len(in))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler never saw the end of the stream")
	}
}

// A long answer written in pieces during one round streams: the queue
// for the round's end never holds more than queueMax and a piece.
func TestRingQueueBounded(t *testing.T) {
	l := ringLoop(t)
	c, peer := pair(t, l)
	const piece = 32 << 10
	all := make([]byte, 64*piece)
	for i := range all {
		all[i] = byte(i * 3)
	}
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, len(all))
		peer.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, _ := io.ReadFull(peer, b)
		got <- b[:n]
	}()
	most := 0
	onLoop(l, func() {
		c.SetHandler(&recorder{c: c, got: make(chan []byte, 16)})
		for off := 0; off < len(all); off += piece {
			c.Write(all[off : off+piece])
			c.outmu.Lock()
			most = max(most, len(c.out))
			c.outmu.Unlock()
		}
	})
	if most > queueMax+piece {
		t.Errorf("%d bytes queued at once; at most %d expected", most, queueMax+piece)
	}
	if b := <-got; !bytes.Equal(b, all) {
		t.Fatalf("the peer got %d bytes, not the %d written (or other ones)", len(b), len(all))
	}
}

// A ring whose submit fails is given up: what it held is written and
// read with plain calls, now and later, and the OnPanic hook hears of it.
func TestRingGivenUp(t *testing.T) {
	l := ringLoop(t)
	told := make(chan any, 4)
	l.OnPanic(func(v any) { told <- v })
	c1, p1 := pair(t, l)
	c2, p2 := pair(t, l)
	h := &collector{c: c1, done: make(chan []byte, 1)}
	var real int
	onLoop(l, func() {
		real = l.ring.fd
		l.ring.fd = -1 // io_uring_enter fails: EBADF
		c1.SetHandler(h)
		c2.SetHandler(&recorder{c: c2, got: make(chan []byte, 16)})
		c1.Write([]byte("to one"))
		c2.Write([]byte("to two"))
	})
	t.Cleanup(func() { syscall.Close(real) })
	if got := readN(t, p1, 6); string(got) != "to one" {
		t.Fatalf("peer one got %q", got)
	}
	if got := readN(t, p2, 6); string(got) != "to two" {
		t.Fatalf("peer two got %q", got)
	}
	select {
	case v := <-told:
		if err, ok := v.(error); !ok || !errors.Is(err, syscall.EBADF) {
			t.Errorf("OnPanic told %v", v)
		}
	case <-time.After(5 * time.Second):
		t.Error("OnPanic never told of the failed submit")
	}
	p1.Write([]byte("back"))
	p1.Close()
	select {
	case got := <-h.done:
		if string(got) != "back" {
			t.Fatalf("handler read %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler never read the peer's bytes and end")
	}
	onLoop(l, func() { c2.Write([]byte("later")) })
	if got := readN(t, p2, 5); string(got) != "later" {
		t.Fatalf("peer two got %q later", got)
	}
}

// The loop counts on a receive with MSG_DONTWAIT completing in its
// submit, data or not: none is left in flight across rounds.
func TestRecvDontWaitCompletesInSubmit(t *testing.T) {
	r, err := newRing(8, 16)
	if errors.Is(err, ErrNoRing) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	l := newLoop(t)
	c, peer := pair(t, l)
	buf := make([]byte, 16)
	for i, want := range []int32{-int32(syscall.EAGAIN), 3} {
		if i == 1 {
			peer.Write([]byte("abc"))
			time.Sleep(20 * time.Millisecond)
		}
		c.Control(func(fd int) { prepRecv(r.next(), fd, buf, 7) })
		if err := r.submit(); err != nil {
			t.Fatal(err)
		}
		head, tail := *r.cqHead, atomic.LoadUint32(r.cqTail)
		if tail == head {
			t.Fatalf("receive %d: no completion after the submit", i)
		}
		e := r.cqes[head&r.cqMask]
		atomic.StoreUint32(r.cqHead, head+1)
		if e.res != want || e.userData != 7 {
			t.Fatalf("receive %d: res %d, user data %d; want %d, 7", i, e.res, e.userData, want)
		}
	}
}
