//go:build linux

package netloop

import (
	"bytes"
	"sync"
	"syscall"
	"testing"
	"time"
)

// gatherer is a handler that keeps what it reads for the test to see.
type gatherer struct {
	mu  sync.Mutex
	buf []byte
}

func (h *gatherer) Ready(c *Conn) {
	b := make([]byte, 16<<10)
	for {
		n, err := c.Read(b)
		h.mu.Lock()
		h.buf = append(h.buf, b[:n]...)
		h.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// waitFor waits up to 5 s for the handler to hold n bytes.
func (h *gatherer) waitFor(t *testing.T, n int) []byte {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		h.mu.Lock()
		got := len(h.buf)
		h.mu.Unlock()
		if got >= n {
			h.mu.Lock()
			defer h.mu.Unlock()
			return append([]byte(nil), h.buf...)
		}
	}
	t.Fatalf("the handler did not get %d bytes within 5 s", n)
	return nil
}

func rcvlowat(t *testing.T, c *Conn) int {
	t.Helper()
	var v int
	var err error
	if cerr := c.Control(func(fd int) { v, err = syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVLOWAT) }); cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A low-water mark holds a socket's edges back until that many bytes
// are there, but the loop's own tick still brings a shorter tail to the
// handler; a new handler (or none) ends the mark, and so does closing.
func TestReadLowat(t *testing.T) {
	l := newLoop(t)
	c, peer := pair(t, l)
	h := &gatherer{}
	onLoop(l, func() {
		c.SetHandler(h)
		if err := c.SetReadLowat(64 << 10); err != nil {
			t.Error(err)
		}
	})
	if v := rcvlowat(t, c); v != 64<<10 {
		t.Fatalf("SO_RCVLOWAT is %d after SetReadLowat(64 KiB)", v)
	}
	// 100 bytes: no edge from the kernel, the tick brings them.
	want := bytes.Repeat([]byte("tail"), 25)
	peer.Write(want)
	if got := h.waitFor(t, len(want)); !bytes.Equal(got, want) {
		t.Fatalf("got %q", got)
	}
	// 200 KB in 8 KiB writes, as PostgreSQL writes a long answer.
	piece := bytes.Repeat([]byte{'x'}, 8<<10)
	for range 25 {
		peer.Write(piece)
	}
	if got := h.waitFor(t, len(want)+25*len(piece)); len(got) != len(want)+25*len(piece) {
		t.Fatalf("got %d bytes, want %d", len(got), len(want)+25*len(piece))
	}
	marked := func() (n int) {
		onLoop(l, func() { n = len(l.lowat) })
		return n
	}
	if n := marked(); n != 1 {
		t.Fatalf("%d low-water sockets on the loop, want 1", n)
	}
	onLoop(l, func() { c.SetHandler(nil) })
	if v, n := rcvlowat(t, c), marked(); v != 1 || n != 0 {
		t.Fatalf("after SetHandler(nil): SO_RCVLOWAT %d, %d low-water sockets; want 1 and 0", v, n)
	}
	onLoop(l, func() {
		c.SetHandler(h)
		c.SetReadLowat(32 << 10)
		c.SetReadLowat(0)
	})
	if v, n := rcvlowat(t, c), marked(); v != 1 || n != 0 {
		t.Fatalf("after SetReadLowat(0): SO_RCVLOWAT %d, %d low-water sockets; want 1 and 0", v, n)
	}
	// Closed with a mark (by another goroutine): the tick lets it go.
	onLoop(l, func() { c.SetReadLowat(32 << 10) })
	c.Close()
	for end := time.Now().Add(5 * time.Second); marked() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("a closed socket stayed among the low-water sockets")
		}
	}
}
