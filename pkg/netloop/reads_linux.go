//go:build linux

// Batched reads: with a ring, the sockets a round of events found readable are all read in one io_uring_enter before their handlers run.

package netloop

import (
	"io"
	"os"
	"sync"
	"syscall"
)

// recvTag marks the user data of a receive (a send's is its slot).
const recvTag = 1 << 62

// recvSize is the size of the buffer a receive fills: the proxy's read
// buffers are as large.
const recvSize = 32 << 10

// recvBufs holds receive buffers between uses; a handler that leaves
// bytes unread keeps its buffer until it reads them.
var recvBufs = sync.Pool{New: func() any { b := make([]byte, recvSize); return &b }}

// receive reads, in one submission, every socket of this round's events
// that is readable and has a handler, so that its handler's Read finds
// the bytes there (Conn.pre) instead of making a read call. conns holds
// the events' conns (nil for none). Fewer such sockets than ringMin: the
// handlers read as without a ring.
func (l *Loop) receive(conns []*Conn, events []syscall.EpollEvent) {
	want := 0
	for i, c := range conns {
		if c != nil && c.wantsRecv(l, events[i].Events) {
			want++
		}
	}
	if want == 0 || want < l.ringMin {
		return
	}
	r := l.ring
	for i, c := range conns {
		if c == nil || !c.wantsRecv(l, events[i].Events) {
			continue
		}
		if events[i].Events&(syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
			c.ended = true // as event will note: set before the completion reads it
		}
		c.fdmu.RLock()
		if c.fd < 0 {
			c.fdmu.RUnlock()
			continue
		}
		s := r.next()
		for s == nil {
			l.submit()
			s = r.next()
		}
		if c.slot == 0 {
			c.slot = l.takeSlot(c)
		}
		c.rbuf = recvBufs.Get().(*[]byte)
		c.recving = true
		prepRecv(s, c.fd, *c.rbuf, recvTag|uint64(c.slot))
		l.held = append(l.held, c)
	}
	l.submit()
	// MSG_DONTWAIT: every receive completed in the submit. The handlers
	// of sends reaped among them run once all of them are taken.
	l.inRecv = true
	l.reap()
	l.inRecv = false
	for i, c := range l.recvWake {
		l.recvWake[i] = nil
		if h := c.handler; h != nil && !c.closed.Load() {
			c.ready(h)
		}
	}
	l.recvWake = l.recvWake[:0]
}

// wantsRecv: an event that may bring bytes, for a socket whose handler
// will read them, with nothing unread from the last receive.
func (c *Conn) wantsRecv(l *Loop, ev uint32) bool {
	return ev&(syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 &&
		c.handler != nil && c.l == l && !c.recving && len(c.pre) == 0 && !c.preEOF && c.preErr == nil
}

// received takes a receive's completion (loop thread).
func (l *Loop) received(c *Conn, res int32) {
	c.recving = false
	c.recvd = true // this round's edge is spent: rready says what is left
	if !c.inflight {
		l.freeSlot(c)
	}
	buf := c.rbuf
	switch {
	case res > 0:
		c.pre = (*buf)[:res]
		// A full buffer may have left bytes behind, and after the
		// peer's end no edge comes again: Read reads on.
		c.rready = int(res) == len(*buf) || c.ended
		return
	case res == 0:
		c.preEOF = true
	case res == -int32(syscall.EAGAIN):
		c.rready = c.ended
	default:
		c.preErr = c.opError("read", os.NewSyscallError("read", syscall.Errno(-res)))
	}
	c.rbuf = nil
	recvBufs.Put(buf)
}

// readPre is Read from what a receive left (ok false: nothing there).
func (c *Conn) readPre(p []byte) (n int, err error, ok bool) {
	if len(c.pre) > 0 {
		n = copy(p, c.pre)
		c.pre = c.pre[n:]
		if len(c.pre) == 0 {
			c.pre = nil
			recvBufs.Put(c.rbuf)
			c.rbuf = nil
		}
		return n, nil, true
	}
	if c.preEOF {
		return 0, io.EOF, true
	}
	if c.preErr != nil {
		return 0, c.preErr, true
	}
	return 0, nil, false
}
