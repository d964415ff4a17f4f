//go:build linux

// Linux: the raw read and write system calls.

package rawconn

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// Conn is a net.Conn whose Read and Write are raw system calls on its
// non-blocking socket; everything else is the wrapped connection's.
type Conn struct {
	net.Conn
	rc syscall.RawConn
}

// Wrap returns c as a *Conn when it is a socket the runtime polls
// (*net.TCPConn, *net.UnixConn), and c itself otherwise.
func Wrap(c net.Conn) net.Conn {
	if _, ok := c.(*Conn); ok {
		return c
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	return &Conn{Conn: c, rc: rc}
}

// Unwrap is the wrapped connection.
func (c *Conn) Unwrap() net.Conn { return c.Conn }

// SyscallConn gives the socket's descriptor (an event loop adopts it).
func (c *Conn) SyscallConn() (syscall.RawConn, error) { return c.rc, nil }

// Read reads what is available, waiting for the socket to be readable.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n uintptr
	var errno syscall.Errno
	err := c.rc.Read(func(fd uintptr) bool {
		for {
			n, _, errno = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch errno {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false
			}
			return true
		}
	})
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case errno != 0:
		return 0, c.opError("read", os.NewSyscallError("read", errno))
	case n == 0:
		return 0, io.EOF
	}
	return int(n), nil
}

// Write writes all of p, waiting for the socket to be writable as needed.
func (c *Conn) Write(p []byte) (int, error) {
	done := 0
	var errno syscall.Errno
	err := c.rc.Write(func(fd uintptr) bool {
		for done < len(p) {
			n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[done])), uintptr(len(p)-done))
			switch e {
			case 0:
				done += int(n)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return done, c.opError("write", err)
	case errno != 0:
		return done, c.opError("write", os.NewSyscallError("write", errno))
	}
	return done, nil
}

// opError reports err as net does; a connection accepted by Listener is
// an *os.File underneath, whose "file already closed" becomes
// net.ErrClosed.
func (c *Conn) opError(op string, err error) error {
	if fc, ok := c.Conn.(*fileConn); errors.Is(err, os.ErrClosed) || ok && fc.closed.Load() && !errors.Is(err, os.ErrDeadlineExceeded) {
		err = net.ErrClosed
	}
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
