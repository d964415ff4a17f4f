//go:build linux

// Linux: the raw read and write system calls.

package rawconn

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// Conn is a net.Conn whose Read and Write are raw system calls on its
// non-blocking socket; everything else is the wrapped connection's.
type Conn struct {
	net.Conn
	rc syscall.RawConn
	r  *readOp
	w  *writeOp
}

// newConn makes the per-direction state once: a closure made per call
// would be an allocation on every read and write.
func newConn(c net.Conn, rc syscall.RawConn) *Conn {
	r, w := &readOp{}, &writeOp{}
	r.fn, w.fn = r.do, w.do
	return &Conn{Conn: c, rc: rc, r: r, w: w}
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
	return newConn(c, rc)
}

// Unwrap is the wrapped connection.
func (c *Conn) Unwrap() net.Conn { return c.Conn }

// SyscallConn gives the socket's descriptor (an event loop adopts it).
func (c *Conn) SyscallConn() (syscall.RawConn, error) { return c.rc, nil }

// readOp is one direction's call state; mu serialises callers, as
// net.Conn allows several.
type readOp struct {
	mu    sync.Mutex
	p     []byte
	n     uintptr
	errno syscall.Errno
	fn    func(fd uintptr) bool
}

// do reads once the socket is ready; false asks the poller to wait.
func (r *readOp) do(fd uintptr) bool {
	for {
		r.n, _, r.errno = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.p[0])), uintptr(len(r.p)))
		switch r.errno {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		return true
	}
}

// Read reads what is available, waiting for the socket to be readable.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		// As net's: nothing to read, but a closed socket still says so.
		if err := c.rc.Control(func(uintptr) {}); err != nil {
			return 0, c.opError("read", err)
		}
		return 0, nil
	}
	r := c.r
	r.mu.Lock()
	r.p = p
	err := c.rc.Read(r.fn)
	n, errno := r.n, r.errno
	r.p = nil
	r.mu.Unlock()
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

type writeOp struct {
	mu    sync.Mutex
	p     []byte
	done  int
	errno syscall.Errno
	fn    func(fd uintptr) bool
}

// do writes what is left of p; false asks the poller to wait.
func (w *writeOp) do(fd uintptr) bool {
	for w.done < len(w.p) {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&w.p[w.done])), uintptr(len(w.p)-w.done))
		switch e {
		case 0:
			w.done += int(n)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			w.errno = e
			return true
		}
	}
	return true
}

// Write writes all of p, waiting for the socket to be writable as needed.
func (c *Conn) Write(p []byte) (int, error) {
	w := c.w
	w.mu.Lock()
	w.p, w.done, w.errno = p, 0, 0
	err := c.rc.Write(w.fn)
	done, errno := w.done, w.errno
	w.p = nil
	w.mu.Unlock()
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
