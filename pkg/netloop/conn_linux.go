//go:build linux

// Conn: a net.Conn on an adopted socket, blocking for goroutines and non-blocking for the loop.

package netloop

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Handler takes a socket's readiness on the loop thread.
type Handler interface {
	// Ready reports that c may be readable or writable (or failed, or
	// closed by another goroutine); the handler reads or writes until it
	// would block (ErrWouldBlock) or it is done.
	Ready(c *Conn)
}

// Panicker is a Handler that wants to know when its Ready panicked: the
// loop recovers the panic and calls Panicked on the loop thread, and the
// handler should give the connection up.
type Panicker interface {
	Panicked(c *Conn, v any)
}

// Conn is a socket adopted by a Loop. Goroutines use it as a net.Conn:
// Read and Write wait for readiness and honour deadlines. While it has a
// Handler (SetHandler, on the loop thread) it is the loop's: Read returns
// ErrWouldBlock instead of waiting, and Write never waits: what the
// socket does not take is kept and sent as it drains (Pending).
type Conn struct {
	// evmu is held while a loop dispatches an event for c and while MoveTo
	// changes c's loop: an event the old loop already took is then not
	// handed to a handler the new loop's thread runs.
	evmu         sync.Mutex
	l            *Loop
	id           uint64
	laddr, raddr net.Addr

	// fdmu is read-held around each system call on fd and write-held to
	// close it, so a descriptor is never closed (and reused) under a call.
	fdmu sync.RWMutex
	fd   int

	w        atomic.Pointer[waiters] // made when a goroutine first waits
	closed   atomic.Bool
	rdl, wdl atomic.Int64 // deadlines, UnixNano; 0: none

	handler Handler // loop thread only
	rready  bool    // loop thread: no read has found the socket empty since the last edge
	ended   bool    // loop thread: an edge said the peer ended (or failed): read on to the end
	lowat   bool    // loop thread: in the loop's low-water sockets (SetReadLowat)

	outmu  sync.Mutex
	out    []byte       // accepted by Write, not yet taken by the socket
	outLen atomic.Int64 // len(out), for Pending without the lock
	// outArmed: the socket is registered for writable edges too. It is
	// not until a write finds it full (armOut), so that the
	// acknowledgement of every answer does not wake the loop for nothing.
	outArmed atomic.Bool

	// With the loop's ring (writes_linux.go), under outmu: a handler's
	// writes wait in out for the end of the round of events; sending is
	// the batch the ring has (inflight) or, after the socket took only
	// part of it, nothing; stalled says out waits for the socket to
	// drain, written as without a ring (Pending counts it then).
	batched  bool
	sending  []byte
	inflight bool
	sentIn   uint64 // the Loop.flushGen whose submit sent sending
	queued   bool   // in the loop's flushQ
	stalled  bool
	slot     uint32 // the loop's index of the send in flight, +1
	werr     error  // a send failed: later writes fail

	// With the ring (reads_linux.go): what a receive of this round read
	// for the handler, read first by Read; its owner's (the loop's
	// while a handler is set, a goroutine's after).
	pre     []byte
	rbuf    *[]byte // pre's buffer, from recvBufs
	preEOF  bool
	preErr  error
	recving bool // loop thread: a receive is in this round's submit
	recvd   bool // loop thread: this round's edge was read by a receive
}

// errMoveBusy is MoveTo's error for a socket with writes not yet sent.
var errMoveBusy = errors.New("netloop: writes under way")

// ErrWouldBlock is what Read returns to the loop when the socket is empty.
var ErrWouldBlock = &wouldBlock{}

type wouldBlock struct{}

func (*wouldBlock) Error() string   { return "netloop: would block" }
func (*wouldBlock) Timeout() bool   { return false }
func (*wouldBlock) Temporary() bool { return true }

// SetHandler gives c's readiness to h (nil: back to waiting goroutines).
// Loop thread only. Edges that came before are not repeated: the caller
// runs h once after setting it.
// It also ends a low-water mark (SetReadLowat), which is the old
// handler's.
func (c *Conn) SetHandler(h Handler) {
	if c.lowat {
		c.SetReadLowat(0)
	}
	c.handler = h
}

// Pending is the number of bytes Write accepted that the socket has not
// taken yet.
func (c *Conn) Pending() int {
	if c.closed.Load() {
		return 0 // what is left is never sent: a handler waiting for it must not wait on
	}
	return int(c.outLen.Load())
}

// Loop is the loop c belongs to.
func (c *Conn) Loop() *Loop { return c.l }

// MoveTo hands c to another loop. c must have no Handler and no I/O under
// way (an idle server connection): its owner is about to use it from l.
func (c *Conn) MoveTo(l *Loop) error {
	c.evmu.Lock()
	defer c.evmu.Unlock()
	old := c.l
	if old == l {
		return nil
	}
	c.fdmu.RLock()
	defer c.fdmu.RUnlock()
	if c.fd < 0 {
		return net.ErrClosed
	}
	c.outmu.Lock()
	busy := c.inflight || c.queued || c.stalled || len(c.out) > 0
	c.outmu.Unlock()
	if busy {
		return errMoveBusy
	}
	old.unwatch(c, c.fd)
	c.l = l
	c.rready = true // the new registration reports what is there, or not
	return l.register(c)
}

func (c *Conn) event(l *Loop, ev uint32) {
	c.evmu.Lock()
	defer c.evmu.Unlock()
	recvd := c.recvd
	c.recvd = false
	if c.l != l {
		return // moved to another loop since the event was taken
	}
	in := ev&(syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0
	if in && !recvd {
		c.rready = true
	}
	if ev&(syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
		// The end came with (or after) the bytes of this edge: a short
		// read does not mean there is nothing more to read, and no edge
		// will say so again.
		c.ended = true
		c.rready = true
	}
	if ev&(syscall.EPOLLOUT|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
		if c.outLen.Load() > 0 || c.stalled {
			c.drainOut()
		}
		// Almost every edge says writable. Only a goroutine waits for
		// the token (a Handler's writes never wait), and it waits only
		// after a write found the socket full, which brings another edge.
		if c.handler == nil {
			c.wake(false)
		}
	}
	if c.handler != nil {
		c.ready(c.handler)
		return
	}
	if in {
		c.wake(true)
	}
}

// ready runs h.Ready and recovers its panic: one connection's bug must
// not end the process. A Panicker is told (and closes c if it panics
// too); another handler's connection is closed.
func (c *Conn) ready(h Handler) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		p, ok := h.(Panicker)
		if !ok {
			c.Close()
			return
		}
		defer func() {
			if recover() != nil {
				c.Close()
			}
		}()
		p.Panicked(c, v)
	}()
	h.Ready(c)
}

func (c *Conn) sys(trap uintptr, p []byte) (int, syscall.Errno) {
	// No defer: this runs for every read and write, and nothing in it panics.
	c.fdmu.RLock()
	if c.fd < 0 {
		c.fdmu.RUnlock()
		return 0, syscall.EBADF
	}
	for {
		n, _, e := syscall.RawSyscall(trap, uintptr(c.fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if e != syscall.EINTR {
			c.fdmu.RUnlock()
			return int(n), e
		}
	}
}

// Read reads what is available. A goroutine waits for data; the loop
// (c has a Handler) gets ErrWouldBlock.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if c.closed.Load() {
			return 0, c.opError("read", net.ErrClosed)
		}
		if c.handler == nil && expired(&c.rdl) {
			// As net.Conn: a passed deadline fails the call even when
			// bytes are waiting (the proxy stops a killed client so).
			return 0, c.opError("read", os.ErrDeadlineExceeded)
		}
		if c.batched {
			if n, err, ok := c.readPre(p); ok {
				return n, err
			}
		}
		if c.handler != nil && !c.rready {
			return 0, ErrWouldBlock // drained since the last edge: no call
		}
		n, e := c.sys(syscall.SYS_READ, p)
		switch {
		case e == 0 && n > 0:
			if n < len(p) && c.handler != nil && !c.ended {
				c.rready = false
			}
			return n, nil
		case e == 0:
			return 0, io.EOF
		case e != syscall.EAGAIN:
			if e == syscall.EBADF && c.closed.Load() {
				return 0, c.opError("read", net.ErrClosed)
			}
			return 0, c.opError("read", os.NewSyscallError("read", e))
		}
		if c.handler != nil {
			c.rready = false
			return 0, ErrWouldBlock
		}
		if err := c.wait(true); err != nil {
			return 0, c.opError("read", err)
		}
	}
}

// Write writes all of p. A goroutine waits for room; the loop's writes
// never wait: the rest is kept and sent when the socket drains.
func (c *Conn) Write(p []byte) (int, error) {
	c.outmu.Lock()
	defer c.outmu.Unlock()
	if c.closed.Load() {
		// As net.Conn; and a handler's bytes would pile up unsent.
		return 0, c.opError("write", net.ErrClosed)
	}
	if c.batched {
		if c.handler != nil {
			return c.queue(p)
		}
		for c.inflight { // a goroutine writes after the ring's batch
			c.outmu.Unlock()
			err := c.wait(false)
			c.outmu.Lock()
			if err != nil {
				return 0, c.opError("write", err)
			}
		}
		if c.werr != nil {
			return 0, c.werr
		}
	}
	if c.handler != nil && len(c.out) > 0 {
		c.out = append(c.out, p...)
		c.outLen.Store(int64(len(c.out)))
		return len(p), nil
	}
	for len(c.out) > 0 { // a goroutine writes after what the loop left
		if err := c.writeOut(); err != nil {
			return 0, err
		}
		if len(c.out) > 0 {
			c.outmu.Unlock()
			err := c.wait(false)
			c.outmu.Lock()
			if err != nil {
				return 0, c.opError("write", err)
			}
		}
	}
	done := 0
	for done < len(p) {
		if c.closed.Load() {
			return done, c.opError("write", net.ErrClosed)
		}
		if c.handler == nil && expired(&c.wdl) {
			return done, c.opError("write", os.ErrDeadlineExceeded)
		}
		n, e := c.sys(syscall.SYS_WRITE, p[done:])
		switch e {
		case 0:
			done += n
			continue
		case syscall.EAGAIN:
			c.armOut()
		default:
			return done, c.opError("write", os.NewSyscallError("write", e))
		}
		if c.handler != nil {
			c.out = append(c.out, p[done:]...)
			c.outLen.Store(int64(len(c.out)))
			return len(p), nil
		}
		c.outmu.Unlock()
		err := c.wait(false)
		c.outmu.Lock()
		if err != nil {
			return done, c.opError("write", err)
		}
	}
	return done, nil
}

// epollEvent is c's registration: readable edges, and writable ones once
// armed.
func (c *Conn) epollEvent() syscall.EpollEvent {
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | epollET}
	if c.outArmed.Load() {
		ev.Events |= syscall.EPOLLOUT
	}
	*(*uint64)(unsafe.Pointer(&ev.Fd)) = c.id
	return ev
}

// armOut registers c for writable edges from now on, before a write that
// found the socket full waits for one. The change reports the socket's
// state at once, so an edge that came meanwhile is not lost.
func (c *Conn) armOut() {
	if c.outArmed.Load() {
		return
	}
	c.fdmu.RLock()
	defer c.fdmu.RUnlock()
	if c.fd < 0 || c.outArmed.Swap(true) {
		return
	}
	ev := c.epollEvent()
	epollCtl(c.l.ep, syscall.EPOLL_CTL_MOD, c.fd, &ev)
}

// writeOut sends what it can of c.out, with outmu held.
func (c *Conn) writeOut() error {
	defer func() { c.outLen.Store(int64(len(c.out))) }()
	for len(c.out) > 0 {
		n, e := c.sys(syscall.SYS_WRITE, c.out)
		switch e {
		case 0:
			c.out = c.out[:copy(c.out, c.out[n:])]
			continue
		case syscall.EAGAIN:
			c.armOut()
			return nil
		}
		c.out = c.out[:0]
		c.stalled = false
		return c.opError("write", os.NewSyscallError("write", e))
	}
	c.stalled = false
	if cap(c.out) > keepOut {
		c.out = nil
	}
	return nil
}

func (c *Conn) drainOut() {
	c.outmu.Lock()
	if len(c.out) > 0 && !c.inflight {
		c.writeOut()
	}
	c.outmu.Unlock()
}

// waiters is what a goroutine that uses a Conn as a net.Conn waits on.
// It is made when one first waits: a loop's handlers never wait, and a
// proxy's clients and servers spend their lives with a handler.
type waiters struct {
	rtok, wtok chan struct{} // readiness tokens
	rdlc, wdlc chan struct{} // a read or write deadline changed
	closing    chan struct{}
	closeOnce  sync.Once
}

// waiting is c's waiters, made on first use. They start with both
// tokens: an edge that came before they existed was not kept, and a
// token too many only makes the waiter try its call once more.
func (c *Conn) waiting() *waiters {
	if w := c.w.Load(); w != nil {
		return w
	}
	w := &waiters{rtok: make(chan struct{}, 1), wtok: make(chan struct{}, 1),
		rdlc: make(chan struct{}, 1), wdlc: make(chan struct{}, 1), closing: make(chan struct{})}
	w.rtok <- struct{}{}
	w.wtok <- struct{}{}
	if !c.w.CompareAndSwap(nil, w) {
		return c.w.Load()
	}
	if c.closed.Load() { // Close ran before the waiters were there
		w.close()
	}
	return w
}

func (w *waiters) close() { w.closeOnce.Do(func() { close(w.closing) }) }

// wake gives a waiting goroutine the read (or write) token. None waits
// before the waiters exist, and they start with both tokens.
func (c *Conn) wake(read bool) {
	if w := c.w.Load(); w != nil {
		if read {
			nudge(w.rtok)
		} else {
			nudge(w.wtok)
		}
	}
}

// nudge puts a token in ch unless it has one.
func nudge(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// expired tells whether the deadline dl holds has passed.
func expired(dl *atomic.Int64) bool {
	d := dl.Load()
	return d != 0 && time.Now().UnixNano() >= d
}

// wait blocks until the read (or write) token comes, the deadline
// passes, or c closes.
func (c *Conn) wait(read bool) error {
	w := c.waiting()
	tok, changed, dl := w.wtok, w.wdlc, &c.wdl
	if read {
		tok, changed, dl = w.rtok, w.rdlc, &c.rdl
	}
	for {
		d := dl.Load()
		if d == 0 {
			select {
			case <-tok:
				return nil
			case <-changed:
				continue
			case <-w.closing:
				return net.ErrClosed
			}
		}
		left := time.Until(time.Unix(0, d))
		if left <= 0 {
			return os.ErrDeadlineExceeded
		}
		t := time.NewTimer(left)
		select {
		case <-tok:
			t.Stop()
			return nil
		case <-changed:
			t.Stop()
		case <-w.closing:
			t.Stop()
			return net.ErrClosed
		case <-t.C:
		}
	}
}

// Close closes the socket. A Handler gets one more Ready to see it.
func (c *Conn) Close() error {
	if c.closed.Swap(true) {
		return c.opError("close", net.ErrClosed)
	}
	if w := c.w.Load(); w != nil {
		w.close()
	}
	inflight := false
	if c.batched {
		// What a handler queued goes first, as a write would have; what
		// the socket cannot take is lost, as it was without a ring.
		c.outmu.Lock()
		if !c.inflight && len(c.out) > 0 {
			c.writeOut()
		}
		inflight = c.inflight
		if !inflight {
			c.out = c.out[:0] // never to be sent now
			c.outLen.Store(0)
		}
		c.outmu.Unlock()
	}
	c.fdmu.Lock()
	fd := c.fd
	c.fd = -1
	c.fdmu.Unlock()
	c.l.unwatch(c, fd)
	err := closeFD(fd)
	if inflight {
		// The ring holds the socket until its send ends: cancel it, so
		// that a peer that reads nothing cannot keep it open.
		l := c.l
		l.Post(func() {
			c.outmu.Lock()
			defer c.outmu.Unlock()
			l.cancelSend(c)
		})
	}
	if !c.l.OnLoop() {
		c.l.Post(func() {
			if h := c.handler; h != nil {
				c.ready(h) // a panic goes to the handler's Panicked, as from any event
			}
		})
	}
	if err != nil {
		return c.opError("close", err)
	}
	return nil
}

// Control runs f with c's descriptor, which stays open meanwhile
// (net.ErrClosed after Close): for calls Read and Write do not make,
// accept4 on a listening socket say.
func (c *Conn) Control(f func(fd int)) error {
	c.fdmu.RLock()
	defer c.fdmu.RUnlock()
	if c.fd < 0 {
		return net.ErrClosed
	}
	f(c.fd)
	return nil
}

// Closed reports whether Close was called.
func (c *Conn) Closed() bool { return c.closed.Load() }

func (c *Conn) LocalAddr() net.Addr  { return c.laddr }
func (c *Conn) RemoteAddr() net.Addr { return c.raddr }

func (c *Conn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

func (c *Conn) SetReadDeadline(t time.Time) error  { return c.setDeadline(true, t) }
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.setDeadline(false, t) }

// setDeadline stores the deadline and tells a waiting goroutine. One that
// is about to wait made the waiters first, so it reads the new value.
func (c *Conn) setDeadline(read bool, t time.Time) error {
	if c.closed.Load() {
		return c.opError("set deadline", net.ErrClosed)
	}
	var v int64
	if !t.IsZero() {
		v = t.UnixNano()
		if v == 0 {
			v = 1
		}
	}
	dl := &c.wdl
	if read {
		dl = &c.rdl
	}
	dl.Store(v)
	if w := c.w.Load(); w != nil {
		changed := w.wdlc
		if read {
			changed = w.rdlc
		}
		nudge(changed)
	}
	return nil
}

func (c *Conn) opError(op string, err error) error {
	if err == io.EOF {
		return err
	}
	return &net.OpError{Op: op, Net: "tcp", Source: c.laddr, Addr: c.raddr, Err: err}
}
