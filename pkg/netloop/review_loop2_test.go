//go:build linux

package netloop

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
)

// rv2PendingReader is a handler that reads like the proxy's (loop.go's
// onClientReady and relayOnLoop): nothing while its own writes are
// pending, else everything until ErrWouldBlock, keeping the bytes in the
// order Read returned them.
type rv2PendingReader struct {
	mu  sync.Mutex
	buf []byte
}

func (h *rv2PendingReader) Ready(c *Conn) {
	if c.Pending() > 0 {
		return // the peer is not reading: wait until it drains
	}
	b := make([]byte, 4096)
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

func (h *rv2PendingReader) waitFor(t *testing.T, n int) []byte {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		h.mu.Lock()
		got := len(h.buf)
		h.mu.Unlock()
		if got >= n {
			break
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]byte(nil), h.buf...)
}

// TestLoop2ReviewRingReceiveOrderAfterHeldSend: with the io_uring, a round's
// receives are taken before the handlers run, and Read hands out what a
// receive read first (reads_linux.go). But receive() reaps every
// completion in the CQ, and a send the kernel held for a full socket
// that completed meanwhile wakes its handler from inside that reap
// (sent -> ready), before the receive completion behind it in the same
// CQ has been taken. The handler's Read then finds no pre bytes and, the
// socket being marked readable, reads the socket directly: the bytes
// AFTER the 32 KiB the receive already took. The handler sees the
// stream out of order (in the proxy: a server's answer relayed to the
// client with 32 KiB blocks swapped).
func TestLoop2ReviewRingReceiveOrderAfterHeldSend(t *testing.T) {
	l := ringLoop(t)
	// A Unix stream pair adopted full, so that a ring send is held by
	// the kernel (as TestRingWakesAfterHeldSend sets it up).
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	syscall.SetsockoptInt(fds[0], syscall.SOL_SOCKET, syscall.SO_SNDBUF, 4096)
	filled := 0
	chunk := make([]byte, 4096)
	for {
		n, err := syscall.Write(fds[0], chunk)
		if err != nil {
			break
		}
		filled += n
	}
	c, err := l.AdoptFD(fds[0], nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	pf := os.NewFile(uintptr(fds[1]), "peer")
	peer, err := net.FileConn(pf)
	pf.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })

	h := &rv2PendingReader{}
	msg := bytes.Repeat([]byte("z"), 100)
	onLoop(l, func() {
		c.SetHandler(h)
		c.Write(msg) // a ring send into a full socket: held by the kernel
	})
	var pending int
	var inflight bool
	onLoop(l, func() {
		pending = c.Pending()
		c.outmu.Lock()
		inflight = c.inflight
		c.outmu.Unlock()
	})
	if pending == 0 || !inflight {
		t.Skipf("setup: the send did not stay in flight (pending %d, inflight %v)", pending, inflight)
	}

	// 64 KiB the peer sends: numbered 4-byte words, so order shows.
	in := make([]byte, 64<<10)
	for i := 0; i < len(in); i += 4 {
		binary.BigEndian.PutUint32(in[i:], uint32(i/4))
	}
	start, drained := make(chan struct{}), make(chan error, 1)
	go func() {
		<-start // once the loop thread is busy: no round reaps the send meanwhile
		peer.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := io.ReadFull(peer, make([]byte, filled+len(msg)))
		drained <- err
	}()
	onLoop(l, func() {
		// The peer reads everything (the held send completes, its
		// completion waits in the CQ), then sends 64 KiB: the next round
		// has the socket readable and the send's completion together.
		close(start)
		if err := <-drained; err != nil {
			t.Errorf("peer drain: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
		if _, err := peer.Write(in); err != nil {
			t.Errorf("peer write: %v", err)
		}
	})
	got := h.waitFor(t, len(in))
	if !bytes.Equal(got, in) {
		first := -1
		for i := 0; i+4 <= min(len(got), len(in)); i += 4 {
			if !bytes.Equal(got[i:i+4], in[i:i+4]) {
				first = i
				break
			}
		}
		word := -1
		if first >= 0 {
			word = int(binary.BigEndian.Uint32(got[first:]))
		}
		t.Fatalf("handler read %d bytes, not the %d sent in order: at byte %d it got word %d (byte %d of the stream)",
			len(got), len(in), first, word, word*4)
	}
}

// TestLoop2ReviewWriteAfterCloseFails: Write on a closed net.Conn fails with
// net.ErrClosed (as *net.TCPConn, and as this Conn's goroutine path and
// Read do). A handler's Write on a Conn another goroutine closed while
// bytes were waiting for the socket to drain (a slow client; Shutdown's
// abort or a kill closing it) is accepted instead: the bytes pile up in
// c.out, which is never sent nor freed, while Pending reports 0, so a
// handler that paces itself on Pending (the proxy's relay) keeps
// writing: memory grows with everything it is given.
func TestLoop2ReviewWriteAfterCloseFails(t *testing.T) {
	for _, ring := range []bool{false, true} {
		name := "plain"
		if ring {
			name = "ring"
		}
		t.Run(name, func(t *testing.T) {
			var l *Loop
			if ring {
				l = ringLoop(t)
			} else {
				var err error
				if l, err = New(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(l.Close)
			}
			c, _ := pair(t, l) // the peer reads nothing
			var pending int
			onLoop(l, func() {
				c.SetHandler(&readyCounter{})
				c.Write(make([]byte, 32<<20))
			})
			onLoop(l, func() { pending = c.Pending() })
			if pending == 0 {
				t.Fatal("setup: 32 MiB to a peer that reads nothing, nothing pending")
			}
			c.Close() // another goroutine closes it

			var werr error
			wrote, outLen, pendingAfter := 0, 0, 0
			piece := make([]byte, 1<<20)
			onLoop(l, func() {
				for range 16 {
					n, err := c.Write(piece)
					if err != nil {
						werr = err
						break
					}
					wrote += n
				}
				c.outmu.Lock()
				outLen = len(c.out)
				c.outmu.Unlock()
				pendingAfter = c.Pending()
			})
			if !errors.Is(werr, net.ErrClosed) {
				t.Fatalf("after Close, the handler's Writes accepted %d bytes (err %v); %d bytes held in the closed Conn's buffer, Pending %d; want net.ErrClosed",
					wrote, werr, outLen, pendingAfter)
			}
		})
	}
}
