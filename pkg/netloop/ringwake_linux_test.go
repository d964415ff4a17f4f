//go:build linux

package netloop

import (
	"bytes"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// readyCounter is a handler that only counts its Ready calls.
type readyCounter struct{ n atomic.Int32 }

func (h *readyCounter) Ready(*Conn) { h.n.Add(1) }

// A ring send that had to wait for room (the socket was full when it was
// submitted, so the kernel poll-armed it) stays in flight across rounds,
// and meanwhile the handler sees Pending() > 0 and stops, as the proxy's
// relay does. When the peer drains, the send completes; if its
// completion may be reaped by flush (another socket was written in that
// round), and the handler must be woken all the same: the socket was
// never armed for EPOLLOUT (no write call found it full), so no edge
// comes, and the handler would never learn that Pending went back to 0.
func TestRingWakesAfterHeldSend(t *testing.T) {
	for _, otherWrite := range []bool{false, true} {
		name := "alone"
		if otherWrite {
			name = "another socket written in the same round"
		}
		t.Run(name, func(t *testing.T) {
			l := ringLoop(t)
			// A Unix stream pair: a send into a full socket takes
			// nothing (EAGAIN), deterministically. Over TCP the same
			// comes when a send that completed whole overshot the
			// send buffer (tcp_sendmsg checks room per segment).
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
			// Adopted full: outArmed stays false (no write call of the
			// loop's found it full).
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
			d, dpeer := pair(t, l)
			h := &readyCounter{}
			msg := bytes.Repeat([]byte("z"), 100)
			onLoop(l, func() {
				c.SetHandler(h)
				d.SetHandler(&readyCounter{})
				c.Write(msg) // a ring send into a full socket: poll-armed
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
			before := h.n.Load()

			drained := make(chan error, 1)
			go func() {
				peer.SetReadDeadline(time.Now().Add(5 * time.Second))
				_, err := io.ReadFull(peer, make([]byte, filled+len(msg)))
				drained <- err
			}()
			onLoop(l, func() {
				// The loop thread is busy while the peer drains: the
				// send's retry (task work) completes meanwhile, and its
				// completion is in the CQ when this round ends.
				if err := <-drained; err != nil {
					t.Errorf("peer drain: %v", err)
				}
				time.Sleep(100 * time.Millisecond)
				if otherWrite {
					d.Write([]byte("x")) // this round's flush reaps the completion
				}
			})
			if otherWrite {
				readN(t, dpeer, 1)
			}
			deadline := time.Now().Add(2 * time.Second)
			for time.Now().Before(deadline) {
				var p int
				onLoop(l, func() { p = c.Pending() })
				if p == 0 && h.n.Load() > before {
					return // told
				}
				time.Sleep(20 * time.Millisecond)
			}
			var p int
			onLoop(l, func() { p = c.Pending() })
			t.Fatalf("send completed (Pending %d), but the handler that saw %d pending was never called again (Ready calls %d -> %d)",
				p, pending, before, h.n.Load())
		})
	}
}
