//go:build linux

// Linux: accepting with raw system calls.

package rawconn

import (
	"errors"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Listener accepts connections with raw system calls. net's Accept makes
// four or five ordinary system calls per connection (accept4, getsockname,
// and setsockopt for TCP_NODELAY and keepalive); each one that finds the
// runtime's monitor thread in its deep sleep wakes it, and it then ticks
// every 20 µs until the process is idle again. A proxy that takes a new
// connection per transaction pays that on every one. Here accept4 and
// setsockopt are raw calls, the addresses come from accept4 itself, and
// the socket joins the runtime's poller through os.NewFile, whose two
// calls (fcntl and epoll_ctl) the runtime makes directly.
type Listener struct {
	f         *os.File // a duplicate of the listening socket (see Listen)
	rc        syscall.RawConn
	addr      net.Addr
	keepAlive bool
	laddr     net.Addr // nil when the listener's address is a wildcard
	closed    atomic.Bool
}

// Listen takes over ln, a *net.TCPListener, so that Accept returns *Conn
// with TCP_NODELAY set, and SO_KEEPALIVE with the system's timings when
// keepAlive is set. A listener's own raw connection cannot wait for
// readiness, so Listen keeps a duplicate of its socket as an *os.File,
// which can, and closes ln. Other listeners are returned as they are.
func Listen(ln net.Listener, keepAlive bool) net.Listener {
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		return ln
	}
	f, err := tl.File()
	if err != nil {
		return ln
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return ln
	}
	addr := tl.Addr().(*net.TCPAddr)
	l := &Listener{f: f, rc: rc, addr: addr, keepAlive: keepAlive}
	if !addr.IP.IsUnspecified() {
		l.laddr = addr
	}
	tl.Close() // the duplicate keeps the socket listening
	return l
}

// Addr is the listening address.
func (l *Listener) Addr() net.Addr { return l.addr }

// Close stops listening; an Accept under way returns net.ErrClosed.
func (l *Listener) Close() error {
	l.closed.Store(true)
	if err := l.f.Close(); err != nil {
		return l.opError(err)
	}
	return nil
}

// Accept waits for and returns the next connection. Running out of
// descriptors or memory is not fatal to a server: Accept waits 10 ms and
// tries again rather than returning that error.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		var rsa syscall.RawSockaddrAny
		var nfd int
		var errno syscall.Errno
		err := l.rc.Read(func(fd uintptr) bool {
			nfd, errno = accept4(int(fd), &rsa)
			return errno != syscall.EAGAIN
		})
		if err != nil {
			return nil, l.opError(err)
		}
		switch {
		case errno == 0:
		case Exhausted(errno):
			time.Sleep(ExhaustedRetry)
			continue
		default:
			return nil, l.opError(os.NewSyscallError("accept4", errno))
		}
		return l.newConn(nfd, &rsa)
	}
}

// accept4 takes the next queued connection on the listening socket lfd
// as a non-blocking descriptor, or returns the errno (EAGAIN: none).
func accept4(lfd int, rsa *syscall.RawSockaddrAny) (int, syscall.Errno) {
	for {
		salen := uint32(syscall.SizeofSockaddrAny)
		r, _, e := syscall.RawSyscall6(syscall.SYS_ACCEPT4, uintptr(lfd), uintptr(unsafe.Pointer(rsa)),
			uintptr(unsafe.Pointer(&salen)), syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0, 0)
		switch e {
		case 0:
			return int(r), 0
		case syscall.EINTR, syscall.ECONNABORTED:
			continue
		}
		return -1, e
	}
}

// Detach hands the listening socket to another poller (an event loop):
// it returns a new non-blocking descriptor for it, the caller's to poll
// and close, and closes l, whose own descriptor would keep waking the
// runtime's poller. Accept the connections with AcceptFD.
func (l *Listener) Detach() (int, error) {
	fd, err := Dup(l.rc)
	if err != nil {
		return -1, l.opError(err)
	}
	l.Close()
	return fd, nil
}

// Dup returns a new non-blocking, close-on-exec descriptor for rc's
// socket, the caller's to close: for another poller to take the socket
// over (the original is then closed, which takes it out of the runtime's
// poller without ending the connection).
func Dup(rc syscall.RawConn) (int, error) {
	fd := -1
	var derr error
	if err := rc.Control(func(s uintptr) {
		r, _, e := syscall.Syscall(syscall.SYS_FCNTL, s, syscall.F_DUPFD_CLOEXEC, 0)
		if e != 0 {
			derr = e
			return
		}
		fd = int(r)
	}); err != nil {
		return -1, err
	}
	if derr != nil {
		return -1, os.NewSyscallError("fcntl", derr)
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return -1, os.NewSyscallError("fcntl", err)
	}
	return fd, nil
}

// AcceptFD accepts one connection on lfd, a descriptor from Detach,
// without waiting: a non-blocking socket with l's options, and its
// addresses. It returns syscall.EAGAIN when none is queued, and the
// errno of a failure (EMFILE: out of descriptors, try again later).
func (l *Listener) AcceptFD(lfd int) (fd int, laddr, raddr net.Addr, err error) {
	var rsa syscall.RawSockaddrAny
	fd, errno := accept4(lfd, &rsa)
	if errno != 0 {
		return -1, nil, nil, errno
	}
	laddr, raddr = l.prepare(fd, &rsa)
	return fd, laddr, raddr, nil
}

// newConn makes a *Conn of an accepted descriptor.
func (l *Listener) newConn(fd int, rsa *syscall.RawSockaddrAny) (net.Conn, error) {
	laddr, raddr := l.prepare(fd, rsa)
	f := os.NewFile(uintptr(fd), "")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, l.opError(err)
	}
	return newConn(&fileConn{File: f, laddr: laddr, raddr: raddr}, rc), nil
}

// prepare sets an accepted socket's options and returns its addresses.
func (l *Listener) prepare(fd int, rsa *syscall.RawSockaddrAny) (laddr, raddr net.Addr) {
	setInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	if l.keepAlive {
		setInt(fd, syscall.SOL_SOCKET, syscall.SO_KEEPALIVE, 1)
	}
	laddr = l.laddr
	if laddr == nil {
		var lsa syscall.RawSockaddrAny
		salen := uint32(syscall.SizeofSockaddrAny)
		_, _, e := syscall.RawSyscall(syscall.SYS_GETSOCKNAME, uintptr(fd), uintptr(unsafe.Pointer(&lsa)), uintptr(unsafe.Pointer(&salen)))
		if e == 0 {
			laddr = sockaddr(&lsa)
		}
		if laddr == nil {
			laddr = l.Addr()
		}
	}
	raddr = sockaddr(rsa)
	if raddr == nil {
		raddr = &net.TCPAddr{}
	}
	return laddr, raddr
}

func (l *Listener) opError(err error) error {
	if l.closed.Load() || errors.Is(err, os.ErrClosed) {
		err = net.ErrClosed
	}
	return &net.OpError{Op: "accept", Net: "tcp", Addr: l.addr, Err: err}
}

// setInt sets an integer socket option; a failure leaves the socket as
// the system made it, as net does.
func setInt(fd, level, opt, v int) {
	val := int32(v)
	syscall.RawSyscall6(syscall.SYS_SETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt), uintptr(unsafe.Pointer(&val)), 4, 0)
}

// sockaddr decodes an address accept4 or getsockname filled in; nil for
// a family other than IPv4 and IPv6.
func sockaddr(rsa *syscall.RawSockaddrAny) net.Addr {
	switch rsa.Addr.Family {
	case syscall.AF_INET:
		p := (*syscall.RawSockaddrInet4)(unsafe.Pointer(rsa))
		port := (*[2]byte)(unsafe.Pointer(&p.Port))
		return &net.TCPAddr{IP: net.IPv4(p.Addr[0], p.Addr[1], p.Addr[2], p.Addr[3]), Port: int(port[0])<<8 | int(port[1])}
	case syscall.AF_INET6:
		p := (*syscall.RawSockaddrInet6)(unsafe.Pointer(rsa))
		port := (*[2]byte)(unsafe.Pointer(&p.Port))
		ip := make(net.IP, net.IPv6len)
		copy(ip, p.Addr[:])
		a := &net.TCPAddr{IP: ip, Port: int(port[0])<<8 | int(port[1])}
		if p.Scope_id != 0 {
			if ifi, err := net.InterfaceByIndex(int(p.Scope_id)); err == nil {
				a.Zone = ifi.Name
			}
		}
		return a
	}
	return nil
}

// fileConn is an accepted socket held as an *os.File, which gives the
// runtime's poller and deadlines; Conn makes its reads and writes.
type fileConn struct {
	*os.File
	laddr, raddr net.Addr
	closed       atomic.Bool
}

// Close closes the socket; the poller's "use of closed file" for a read
// or write under way is then reported as net.ErrClosed (Conn.opError).
func (c *fileConn) Close() error {
	if c.closed.Swap(true) {
		return c.opError("close", net.ErrClosed)
	}
	return c.File.Close()
}

// SetDeadline, SetReadDeadline and SetWriteDeadline report a closed
// socket as net.Conn does (net.ErrClosed), not as os.File's "use of
// closed file", which callers cannot tell apart.
func (c *fileConn) SetDeadline(t time.Time) error {
	return c.setErr(c.File.SetDeadline(t))
}

func (c *fileConn) SetReadDeadline(t time.Time) error {
	return c.setErr(c.File.SetReadDeadline(t))
}

func (c *fileConn) SetWriteDeadline(t time.Time) error {
	return c.setErr(c.File.SetWriteDeadline(t))
}

func (c *fileConn) setErr(err error) error {
	if err != nil && c.closed.Load() {
		return c.opError("set", net.ErrClosed)
	}
	return err
}

func (c *fileConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.laddr, Addr: c.raddr, Err: err}
}

func (c *fileConn) LocalAddr() net.Addr  { return c.laddr }
func (c *fileConn) RemoteAddr() net.Addr { return c.raddr }
