// Command evloop is a measurement prototype: transaction pooling in one
// locked OS thread that waits on its own level-triggered epoll and makes
// every socket call a raw system call, as PgBouncer's libevent loop does.
// It shows what a Go proxy built as an event loop costs per transaction on
// a machine, next to PgBouncer and qprouter (docs/benchmarks.md, "What an
// event loop reaches"). It is not a proxy: clients are trusted, nothing is
// tracked, and a client that leaves mid-transaction costs a server.
package main

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/alecthomas/kong"
	"github.com/qpkit/qpkit/benchmarks/experiments/relay-ceiling/wire"
)

const bufSize = 32 << 10

type conn struct {
	fd      int
	client  bool
	buf     []byte
	started bool  // client: the welcome was sent
	peer    *conn // the other side during a transaction
	pending []byte
	frames  wire.Frames // server: the answer under way
}

type loop struct {
	ep      int
	conns   map[int]*conn
	free    []*conn
	waiting []*conn
	welcome []byte
	keep    []any // files whose finalizers would close the descriptors in use
}

func rawCall(trap, a1, a2, a3 uintptr) (uintptr, syscall.Errno) {
	for {
		r, _, e := syscall.RawSyscall(trap, a1, a2, a3)
		if e != syscall.EINTR {
			return r, e
		}
	}
}

func readFD(fd int, b []byte) (int, syscall.Errno) {
	n, e := rawCall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(n), e
}

// writeFD writes all of b, retrying when the socket is full (acceptable
// for -S answers of a few hundred bytes; a real loop would wait for
// EPOLLOUT and stop reading the server meanwhile).
func writeFD(fd int, b []byte) bool {
	for len(b) > 0 {
		n, e := rawCall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		switch e {
		case 0:
			b = b[n:]
		case syscall.EAGAIN:
		default:
			return false
		}
	}
	return true
}

func (l *loop) watch(fd int) error {
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}
	return syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_ADD, fd, &ev)
}

func (l *loop) drop(c *conn) {
	syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_DEL, c.fd, nil)
	syscall.Close(c.fd)
	delete(l.conns, c.fd)
	if c.client && c.peer != nil {
		c.peer.peer = nil
		l.drop(c.peer)
	}
}

// fileFD takes the descriptor of a net.Conn or net.Listener (a duplicate
// the loop owns), non-blocking.
func (l *loop) fileFD(v interface{ File() (*os.File, error) }) (int, error) {
	f, err := v.File()
	if err != nil {
		return 0, err
	}
	l.keep = append(l.keep, f)
	fd := int(f.Fd())
	return fd, syscall.SetNonblock(fd, true)
}

func (l *loop) assign(cl, srv *conn) {
	cl.peer, srv.peer = srv, cl
	srv.frames.Reset()
	writeFD(srv.fd, cl.pending)
	cl.pending = cl.pending[:0]
}

func (l *loop) onClient(c *conn) {
	n, e := readFD(c.fd, c.buf)
	if e == syscall.EAGAIN {
		return
	}
	if e != 0 || n == 0 {
		l.drop(c)
		return
	}
	b := c.buf[:n]
	switch {
	case !c.started && n >= 8 && int(b[4])<<24|int(b[5])<<16|int(b[6])<<8|int(b[7]) == wire.SSLRequestCode:
		writeFD(c.fd, []byte{'N'})
	case !c.started: // the startup packet, whole in one read
		c.started = true
		writeFD(c.fd, l.welcome)
	case c.peer != nil:
		writeFD(c.peer.fd, b)
	case b[0] == 'X':
		l.drop(c)
	default:
		c.pending = append(c.pending, b...)
		if k := len(l.free); k > 0 {
			srv := l.free[k-1]
			l.free = l.free[:k-1]
			l.assign(c, srv)
		} else {
			l.waiting = append(l.waiting, c)
		}
	}
}

func (l *loop) onServer(s *conn) {
	n, e := readFD(s.fd, s.buf)
	if e == syscall.EAGAIN {
		return
	}
	if e != 0 || n == 0 {
		fmt.Fprintln(os.Stderr, "evloop: a server connection ended; it is not replaced")
		l.drop(s)
		return
	}
	b := s.buf[:n]
	end := s.frames.Feed(b)
	cl := s.peer
	if cl == nil {
		return
	}
	writeFD(cl.fd, b)
	if !end {
		return
	}
	cl.peer, s.peer = nil, nil
	for len(l.waiting) > 0 {
		next := l.waiting[0]
		l.waiting = l.waiting[1:]
		if l.conns[next.fd] == next {
			l.assign(next, s)
			return
		}
	}
	l.free = append(l.free, s)
}

func (l *loop) accept(lfd int) {
	for {
		nfd, _, e := syscall.RawSyscall6(syscall.SYS_ACCEPT4, uintptr(lfd), 0, 0, syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0, 0)
		if e != 0 {
			return
		}
		one := int32(1)
		syscall.RawSyscall6(syscall.SYS_SETSOCKOPT, nfd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, uintptr(unsafe.Pointer(&one)), 4, 0)
		c := &conn{fd: int(nfd), client: true, buf: make([]byte, bufSize)}
		l.conns[c.fd] = c
		if l.watch(c.fd) != nil {
			l.drop(c)
		}
	}
}

func run(f *wire.Flags) error {
	runtime.LockOSThread()
	addr, db, user, err := f.Target()
	if err != nil {
		return err
	}
	l := &loop{conns: map[int]*conn{}}
	if l.ep, err = syscall.EpollCreate1(syscall.EPOLL_CLOEXEC); err != nil {
		return err
	}
	for i := 0; i < f.PoolSize; i++ {
		nc, answer, err := wire.Dial(addr, db, user)
		if err != nil {
			return err
		}
		if l.welcome == nil {
			l.welcome = wire.Welcome(answer)
		}
		fd, err := l.fileFD(nc.(*net.TCPConn))
		if err != nil {
			return err
		}
		nc.Close()
		s := &conn{fd: fd, buf: make([]byte, bufSize)}
		l.conns[fd] = s
		l.free = append(l.free, s)
		if err := l.watch(fd); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", f.Listen)
	if err != nil {
		return err
	}
	lfd, err := l.fileFD(ln.(*net.TCPListener))
	if err != nil {
		return err
	}
	l.keep = append(l.keep, ln)
	if err := l.watch(lfd); err != nil {
		return err
	}
	events := make([]syscall.EpollEvent, 256)
	for {
		// A raw wait holds the thread's processor; the 10 ms timeout (and
		// the EINTR of a preemption signal) lets the runtime stop the world.
		n, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_WAIT, uintptr(l.ep), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 10, 0, 0)
		if e != 0 {
			continue
		}
		for _, ev := range events[:n] {
			fd := int(ev.Fd)
			if fd == lfd {
				l.accept(lfd)
				continue
			}
			switch c := l.conns[fd]; {
			case c == nil:
			case c.client:
				l.onClient(c)
			default:
				l.onServer(c)
			}
		}
	}
}

func main() {
	var f wire.Flags
	kong.Parse(&f, kong.Description("Measurement prototype: transaction pooling in a raw-epoll event loop (trust, no tracking)."))
	if err := run(&f); err != nil {
		fmt.Fprintln(os.Stderr, "evloop:", err)
		os.Exit(1)
	}
}
