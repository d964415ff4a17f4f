//go:build linux

// Batched writes: with a ring, a handler's writes wait for the end of the round of events and go out in one io_uring_enter.

package netloop

import (
	"fmt"
	"math"
	"os"
	"sync/atomic"
	"syscall"
)

// ringID is the epoll key of the ring's descriptor (conn ids count up
// from 1, the eventfd is 0).
const ringID = 1<<64 - 1

// queueMax is how many bytes a socket's queue holds for the end of the
// round; beyond it, Write writes.
const queueMax = 64 << 10

// keepOut is the largest write buffer a socket keeps once empty: a
// stream of answers reuses it rather than allocate one per round (the
// queue grows to queueMax plus a read's worth before it is written).
const keepOut = 256 << 10

// cancelTag marks the user data of a cancel request, whose completion
// needs nothing.
const cancelTag = 1 << 63

// queue keeps p for the next flush (loop thread, c has a Handler). The
// socket takes it at the end of this round of events, together with the
// loop's other writes.
func (c *Conn) queue(p []byte) (int, error) {
	if c.werr != nil {
		return 0, c.werr
	}
	c.out = append(c.out, p...)
	if len(c.out) >= queueMax && !c.inflight && !c.stalled {
		// A long answer streams: write now, as without a ring, rather
		// than hold it all for the end of the round (a 1M-row result
		// would wait whole in memory).
		c.stalled = true // until writeOut finds the socket took it all
		if err := c.writeOut(); err != nil {
			c.werr = err
		}
	}
	if c.stalled || c.inflight {
		c.outLen.Store(int64(len(c.out) + len(c.sending)))
	}
	if !c.queued {
		c.queued = true
		c.l.flushQ = append(c.l.flushQ, c)
	}
	return len(p), nil
}

// flush hands every queued write to the ring and submits them in one
// system call. A socket's descriptor stays read-locked from its SQE to
// the submit, so that a Close meanwhile cannot let the number be reused
// under it.
func (l *Loop) flush() {
	r := l.ring
	l.flushGen++
	q := l.flushQ
	l.flushQ, l.flushQ2 = l.flushQ2[:0], nil // sent may queue more meanwhile
	if len(q) < l.ringMin && r.tail == atomic.LoadUint32(r.sqHead) {
		// One socket to write to: a write call costs less than a ring
		// submission of one send (one client, say). Or the ring failed.
		for i, c := range q {
			q[i] = nil
			c.outmu.Lock()
			c.queued = false
			if !c.inflight && !c.stalled && len(c.out) > 0 {
				c.stalled = true // until writeOut finds the socket took it all
				if err := c.writeOut(); err != nil {
					c.werr = err
				}
			}
			c.outmu.Unlock()
		}
		l.flushQ2 = q[:0]
		return
	}
	for i, c := range q {
		q[i] = nil
		c.outmu.Lock()
		c.queued = false
		if c.inflight || c.stalled || len(c.out) == 0 {
			c.outmu.Unlock()
			continue
		}
		c.fdmu.RLock()
		if c.fd < 0 {
			c.fdmu.RUnlock()
			c.out = c.out[:0]
			c.outmu.Unlock()
			continue
		}
		s := r.next()
		for s == nil { // the queue is full: submit what is there first
			l.submit()
			s = r.next()
		}
		if c.slot == 0 {
			c.slot = l.takeSlot(c)
		}
		c.sending, c.out = c.out, c.sending[:0]
		c.inflight, c.sentIn = true, l.flushGen
		c.outLen.Store(int64(len(c.sending)))
		prepSend(s, c.fd, c.sending, uint64(c.slot))
		l.held = append(l.held, c)
		c.outmu.Unlock()
	}
	l.flushQ2 = q[:0]
	l.submit()
	// Sends done by the submit itself: no handler saw them pending. (A send
	// of an earlier flush that completes now, one the kernel held for a
	// full socket, may have been seen pending: see sent.)
	l.inFlush = true
	l.reap()
	l.inFlush = false
}

// submit submits and then lets go of the descriptors held for it.
func (l *Loop) submit() {
	for try := 0; ; try++ {
		err := l.ring.submit()
		if err == nil {
			break
		}
		if (err == syscall.EAGAIN || err == syscall.EBUSY) && try < 100 {
			// Short of memory, or of room for completions (4,096 of
			// them): try again. Not reaping here: a completion may
			// write to a socket whose descriptor is held.
			continue
		}
		l.giveUpRing(err)
		break
	}
	for i, c := range l.held {
		c.fdmu.RUnlock()
		l.held[i] = nil
	}
	l.held = l.held[:0]
}

func (l *Loop) takeSlot(c *Conn) uint32 {
	if n := len(l.free); n > 0 {
		s := l.free[n-1]
		l.free = l.free[:n-1]
		l.slots[s-1] = c
		return s
	}
	l.slots = append(l.slots, c)
	return uint32(len(l.slots))
}

// giveUpRing takes back the requests the kernel refused to take and
// does them with plain calls, and so does every later round: a ring that
// fails its submit is not trusted again. The loop's OnPanic hook hears
// of it (qprouter logs it).
func (l *Loop) giveUpRing(err error) {
	r := l.ring
	head := atomic.LoadUint32(r.sqHead)
	for i := head; i != r.tail; i++ {
		e := r.sqes[i&r.sqMask]
		slot := e.userData &^ recvTag
		if e.userData&cancelTag != 0 || slot == 0 || slot > uint64(len(l.slots)) {
			continue
		}
		c := l.slots[slot-1]
		if c == nil {
			continue
		}
		if e.userData&recvTag != 0 {
			c.recving = false
			recvBufs.Put(c.rbuf)
			c.rbuf = nil // the handler reads with read calls
		} else {
			// Back in front of the queue, which the next flush writes
			// with write calls (descriptors are held until then).
			c.outmu.Lock()
			c.out = append(c.sending, c.out...)
			c.sending = nil
			c.inflight = false
			c.outLen.Store(0)
			if !c.queued {
				c.queued = true
				l.flushQ = append(l.flushQ, c)
			}
			c.outmu.Unlock()
		}
		if !c.inflight && !c.recving {
			l.freeSlot(c)
		}
	}
	r.tail = head
	atomic.StoreUint32(r.sqTail, head)
	l.ringMin = math.MaxInt
	if h := l.onPanic.Load(); h != nil {
		(*h)(fmt.Errorf("netloop: io_uring submit failed, read and write calls from now on: %w", err))
	}
}

// freeSlot gives c's slot back: none of its requests is in flight.
func (l *Loop) freeSlot(c *Conn) {
	if c.slot == 0 {
		return
	}
	l.slots[c.slot-1] = nil
	l.free = append(l.free, c.slot)
	c.slot = 0
}

// reap takes the completed sends and receives.
func (l *Loop) reap() {
	r := l.ring
	head := *r.cqHead
	for {
		tail := atomic.LoadUint32(r.cqTail)
		if head == tail {
			return
		}
		for ; head != tail; head++ {
			e := r.cqes[head&r.cqMask]
			atomic.StoreUint32(r.cqHead, head+1)
			l.sent(&e)
		}
	}
}

func (l *Loop) sent(e *cqe) {
	if e.userData&cancelTag != 0 {
		return
	}
	slot := e.userData &^ recvTag
	if slot == 0 || slot > uint64(len(l.slots)) {
		return
	}
	c := l.slots[slot-1]
	if c == nil {
		return
	}
	if e.userData&recvTag != 0 {
		l.received(c, e.res)
		return
	}
	c.outmu.Lock()
	c.inflight = false
	// A handler may have seen it pending and stopped, unless this very
	// flush submitted it.
	wake := !l.inFlush || c.sentIn != l.flushGen
	switch {
	case e.res >= 0 && int(e.res) == len(c.sending):
		c.sending = c.sending[:0]
	case e.res >= 0 || e.res == -int32(syscall.EAGAIN):
		// The socket took part of it: the rest goes before anything
		// queued since, by write calls as the socket drains (EPOLLOUT),
		// as without a ring. One now: if it finds the socket full, the
		// socket owes us an edge.
		n := max(int(e.res), 0)
		if len(c.out) == 0 {
			c.out = c.sending[n:] // its array is out's now
		} else {
			c.out = append(append(make([]byte, 0, len(c.sending)-n+len(c.out)), c.sending[n:]...), c.out...)
		}
		c.sending = nil
		c.stalled = true
		if err := c.writeOut(); err != nil {
			c.werr = err
		}
		wake = wake || !c.stalled
	default:
		c.sending = c.sending[:0]
		c.out = c.out[:0]
		c.werr = c.opError("write", os.NewSyscallError("write", syscall.Errno(-e.res)))
		wake = true
	}
	if cap(c.sending) > keepOut {
		c.sending = nil
	}
	if !c.stalled {
		c.outLen.Store(0)
	}
	if !c.recving {
		l.freeSlot(c)
	}
	if len(c.out) > 0 && !c.stalled && !c.queued && c.handler != nil {
		c.queued = true
		l.flushQ = append(l.flushQ, c)
	}
	c.outmu.Unlock()
	if c.handler == nil {
		c.wake(false)
		return
	}
	if wake && !c.closed.Load() {
		if l.inRecv {
			// Receives of this round may still wait in the completion
			// queue: a handler run now could read a socket directly
			// ahead of the bytes its receive took.
			l.recvWake = append(l.recvWake, c)
			return
		}
		c.ready(c.handler)
	}
}

// cancelSend asks the ring to give up c's send in flight (c is closing);
// on the loop thread.
func (l *Loop) cancelSend(c *Conn) {
	if !c.inflight || c.slot == 0 {
		return
	}
	s := l.ring.next()
	for s == nil {
		l.submit()
		s = l.ring.next()
	}
	prepCancel(s, uint64(c.slot), cancelTag|uint64(c.slot))
	l.submit()
}
