//go:build linux

// Low-water marks: a socket streaming a long answer wakes the loop once per batch of bytes, not once per write of its peer.

package netloop

import (
	"syscall"
	"time"
)

// lowatTick is how often the loop hands its low-water sockets a read
// edge of its own: the last bytes of a stream, fewer than the mark,
// bring none from the kernel.
const lowatTick = time.Millisecond

// SetReadLowat makes the kernel report c readable only once n bytes
// wait in it (SO_RCVLOWAT), and has the loop give c's handler a read
// edge every lowatTick meanwhile, so that a tail shorter than n waits
// at most that long. n <= 1 turns it off. A peer that writes a long
// answer in small pieces (PostgreSQL writes 8 KiB at a time) then wakes
// the loop once per n bytes instead of once per piece. Loop thread
// only, for a socket with a Handler.
func (c *Conn) SetReadLowat(n int) error {
	on := n > 1
	if !on {
		n = 1
	}
	var serr error
	err := c.Control(func(fd int) {
		serr = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVLOWAT, n)
	})
	if err == nil && serr != nil {
		err = c.opError("setsockopt SO_RCVLOWAT", serr)
	}
	if err != nil || !on {
		c.l.dropLowat(c)
		return err
	}
	if !c.lowat {
		c.lowat = true
		if len(c.l.lowat) == 0 {
			c.l.lowatNext = time.Now().Add(lowatTick)
		}
		c.l.lowat = append(c.l.lowat, c)
	}
	return nil
}

// dropLowat takes c out of the low-water sockets.
func (l *Loop) dropLowat(c *Conn) {
	if !c.lowat {
		return
	}
	c.lowat = false
	for i, x := range l.lowat {
		if x == c {
			last := len(l.lowat) - 1
			l.lowat[i] = l.lowat[last]
			l.lowat[last] = nil
			l.lowat = l.lowat[:last]
			return
		}
	}
}

// pollLowat gives each low-water socket a read edge once lowatTick has
// passed since the last time. Loop thread, with l.lowat not empty.
func (l *Loop) pollLowat() {
	now := time.Now()
	if now.Before(l.lowatNext) {
		return
	}
	l.lowatNext = now.Add(lowatTick)
	// A handler may turn its mark off (or another's) meanwhile.
	l.lowatRun = append(l.lowatRun[:0], l.lowat...)
	for i, c := range l.lowatRun {
		l.lowatRun[i] = nil
		if !c.lowat {
			continue
		}
		if c.closed.Load() {
			l.dropLowat(c)
			continue
		}
		c.event(l, syscall.EPOLLIN)
	}
}
