//go:build !linux

package netloop

import (
	"errors"
	"net"
)

// Loop is unavailable off Linux: New fails and callers keep Go's poller.
type Loop struct{}

// Conn is unavailable off Linux.
type Conn struct{ net.Conn }

// Handler takes a socket's readiness on the loop thread.
type Handler interface{ Ready(c *Conn) }

// Panicker is a Handler told of its Ready's panic.
type Panicker interface{ Panicked(c *Conn, v any) }

// ErrWouldBlock is what Read returns to the loop when the socket is empty.
var ErrWouldBlock = errors.New("netloop: would block")

// ErrNoRing is NewWith's error when the kernel has no io_uring.
var ErrNoRing = errors.New("netloop: io_uring unavailable")

// Options are a loop's settings.
type Options struct {
	IOURing   bool
	RingBatch int
}

// New fails off Linux.
func New() (*Loop, error) { return nil, errors.New("netloop: Linux only") }

// NewWith fails off Linux.
func NewWith(o Options) (*Loop, error) { return New() }

// Deferred is work left for the end of a loop's round of events.
type Deferred interface{ RunDeferred() }

func (l *Loop) Defer(d Deferred)                {}
func (l *Loop) Close()                          {}
func (l *Loop) OnLoop() bool                    { return false }
func (l *Loop) Post(f func())                   {}
func (l *Loop) OnPanic(f func(v any))           {}
func (l *Loop) Adopt(c net.Conn) (*Conn, error) { return nil, errors.New("netloop: Linux only") }
func (l *Loop) AdoptFD(fd int, laddr, raddr net.Addr) (*Conn, error) {
	return nil, errors.New("netloop: Linux only")
}
func (c *Conn) Control(f func(fd int)) error { return errors.New("netloop: Linux only") }
func (c *Conn) SetHandler(h Handler)         {}
func (c *Conn) MoveTo(l *Loop) error         { return errors.New("netloop: Linux only") }
func (c *Conn) Pending() int                 { return 0 }
func (c *Conn) SetReadLowat(n int) error     { return nil }
func (c *Conn) Loop() *Loop                  { return nil }
func (c *Conn) Closed() bool                 { return false }

// Adopter fails off Linux.
func Adopter(loops ...*Loop) func(net.Conn) (net.Conn, error) {
	return func(net.Conn) (net.Conn, error) { return nil, errors.New("netloop: Linux only") }
}
