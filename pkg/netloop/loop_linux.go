//go:build linux

// Loop: one locked OS thread waiting on its own epoll for every adopted socket.

package netloop

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/qpkit/qpkit/pkg/rawconn"
)

// Loop polls adopted sockets on its own edge-triggered epoll, in one
// goroutine locked to its OS thread. Readiness goes to the socket's
// Handler when it has one (run on the loop thread, the fast path) and
// otherwise wakes the goroutine blocked in the Conn's Read or Write.
type Loop struct {
	ep  int
	efd int // eventfd: Post wakes the wait

	mu     sync.Mutex
	conns  map[uint64]*Conn
	nextID uint64
	tasks  []func()
	posted atomic.Bool // a wake-up is pending on efd
	closed bool

	thread  atomic.Int64 // the loop thread's id, for OnLoop
	onPanic atomic.Pointer[func(any)]
	done    chan struct{}

	// With an io_uring (Options.IOURing), the readable sockets of a round
	// of events are read together before their handlers run
	// (reads_linux.go), and the handlers' writes are queued and sent
	// together at the end of the round (writes_linux.go): a system call
	// for each batch. Loop thread only.
	ring     *ring
	flushQ   []*Conn // conns with queued writes
	flushQ2  []*Conn // flushQ's spare array
	held     []*Conn // conns whose descriptor is read-locked until the submit
	slots    []*Conn // by slot-1: conns with a send or receive in flight
	free     []uint32
	inFlush  bool    // reaping the sends of flush's own submit
	inRecv   bool    // reaping the receives of receive's submit
	recvWake []*Conn // handlers of sends reaped meanwhile, to run after
	flushGen uint64  // counts flushes (Conn.sentIn)
	ringMin  int     // fewer sockets to read or write than this: plain calls (Options.RingBatch)

	later []Deferred // loop thread: run after the round's writes

	evConns []*Conn // loop thread: the conns of a round's events

	// Sockets with a low-water mark (SetReadLowat), and when the loop
	// next gives them a read edge of its own. Loop thread only.
	lowat     []*Conn
	lowatRun  []*Conn
	lowatNext time.Time
	waits     uint64 // loop thread: epoll_wait calls, for tests
}

// Deferred is work a handler leaves for the end of the round of events,
// after the round's writes have gone to their sockets.
type Deferred interface{ RunDeferred() }

// Defer runs d.RunDeferred on the loop thread once this round's writes
// are sent. Loop thread only.
func (l *Loop) Defer(d Deferred) { l.later = append(l.later, d) }

// Options are a loop's settings.
type Options struct {
	// IOURing reads and writes handlers' sockets through an io_uring, a
	// batch per round of events, instead of a read or write system call
	// each. When the kernel has no io_uring, NewWith fails with
	// ErrNoRing.
	IOURing bool
	// RingBatch is the fewest sockets a round must read (or write) for
	// the ring to do it; below it they are read and write calls, which
	// cost less for one socket. 0: 2.
	RingBatch int
}

// New starts a loop, and raises GOMAXPROCS by one until its Close: a
// busy loop keeps its processor while it waits for the next event.
func New() (*Loop, error) { return NewWith(Options{}) }

// NewWith is New with options.
func NewWith(o Options) (*Loop, error) {
	var rg *ring
	if o.IOURing {
		var err error
		if rg, err = newRing(256, 4096); err != nil {
			return nil, err
		}
	}
	l, err := start(rg)
	if err != nil {
		if rg != nil {
			rg.close()
		}
		return nil, err
	}
	if o.RingBatch > 0 {
		l.ringMin = o.RingBatch
	}
	return l, nil
}

func start(rg *ring) (*Loop, error) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("netloop: epoll_create1: %w", err)
	}
	r, _, e := syscall.Syscall(syscall.SYS_EVENTFD2, 0, syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if e != 0 {
		syscall.Close(ep)
		return nil, fmt.Errorf("netloop: eventfd2: %w", e)
	}
	l := &Loop{ep: ep, efd: int(r), conns: make(map[uint64]*Conn), done: make(chan struct{}), ring: rg, ringMin: 2}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | epollET}
	if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, l.efd, &ev); err != nil {
		syscall.Close(ep)
		syscall.Close(l.efd)
		return nil, fmt.Errorf("netloop: epoll_ctl eventfd: %w", err)
	}
	if rg != nil {
		// The ring's descriptor is readable when a send that had to wait
		// for room completes.
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | epollET}
		*(*uint64)(unsafe.Pointer(&ev.Fd)) = ringID
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, rg.fd, &ev); err != nil {
			syscall.Close(ep)
			syscall.Close(l.efd)
			return nil, fmt.Errorf("netloop: epoll_ctl io_uring: %w", err)
		}
	}
	addProc(1)
	started := make(chan struct{})
	go l.run(started)
	<-started
	return l, nil
}

// Close stops the loop; adopted sockets are left to their owners.
func (l *Loop) Close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	l.wakeLocked()
	l.mu.Unlock()
	<-l.done
	addProc(-1)
}

// procs counts the running loops over the GOMAXPROCS found when the
// first one started: a busy loop keeps its processor while it waits, so
// each loop gets one more, and goroutines keep as many as they had.
var procs struct {
	sync.Mutex
	base, loops int
}

func addProc(d int) {
	procs.Lock()
	defer procs.Unlock()
	if procs.loops == 0 {
		procs.base = runtime.GOMAXPROCS(0)
	}
	procs.loops += d
	runtime.GOMAXPROCS(procs.base + procs.loops)
}

// OnLoop reports whether the caller runs on the loop thread (in a
// Handler or a posted function).
func (l *Loop) OnLoop() bool { return int64(syscall.Gettid()) == l.thread.Load() }

// Post runs f on the loop thread, after the events being handled.
// A closed loop drops f.
func (l *Loop) Post(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.tasks = append(l.tasks, f)
	l.wakeLocked()
}

// wakeLocked writes the eventfd, with mu held: the loop closes it under
// mu, so a write never reaches a descriptor number reused since.
func (l *Loop) wakeLocked() {
	if l.posted.Swap(true) {
		return
	}
	one := uint64(1)
	syscall.RawSyscall(syscall.SYS_WRITE, uintptr(l.efd), uintptr(unsafe.Pointer(&one)), 8)
}

// unwatch takes fd out of the loop's epoll unless the loop is closed (its
// epoll descriptor number may then belong to something else).
func (l *Loop) unwatch(c *Conn, fd int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		epollCtl(l.ep, syscall.EPOLL_CTL_DEL, fd, nil)
	}
	delete(l.conns, c.id)
}

func (l *Loop) run(started chan<- struct{}) {
	runtime.LockOSThread()
	defer close(l.done)
	l.thread.Store(int64(syscall.Gettid()))
	close(started)
	events := make([]syscall.EpollEvent, 256)
	var tasks []func()
	hot := false
	for {
		// A busy loop (hot) waits for at most hotWait with a raw call,
		// which keeps the thread's processor as a C event loop keeps its
		// CPU (New added one for it): the wake-up skips the runtime's
		// system-call bookkeeping and its monitor's polling of a
		// processor in a system call, and events already there come
		// back in the same call. A stop-the-world still reaches the
		// loop: its preemption signal ends the wait (EINTR), and the
		// wait is bounded anyway. After hotWait without an event the
		// loop goes cold: it takes events already there with a raw
		// call, and when there are none blocks as a system call the
		// runtime sees, so that an idle proxy is not woken to be
		// preempted every 10 ms.
		var n int
		var e syscall.Errno
		if len(l.lowat) > 0 {
			// A low-water socket may hold a tail no edge will report.
			n, e = l.wait(events, int(lowatTick/time.Millisecond), true)
		} else if hot {
			n, e = l.wait(events, hotWait, true)
			hot = e != 0 || n > 0 // EINTR: a signal, not a quiet hotWait
		} else if n, e = l.wait(events, 0, true); e == 0 && n == 0 {
			n, e = l.wait(events, -1, false)
		}
		if e != 0 {
			n = 0
		}
		if n > 0 {
			hot = true
		}
		conns := l.evConns[:0]
		for i := range events[:n] {
			id := *(*uint64)(unsafe.Pointer(&events[i].Fd))
			var c *Conn
			if id != 0 && id != ringID { // the eventfd: tasks below; the ring: reaped below
				l.mu.Lock()
				c = l.conns[id]
				l.mu.Unlock()
			}
			conns = append(conns, c)
		}
		if l.ring != nil && n > 0 {
			l.receive(conns, events[:n])
		}
		for i, c := range conns {
			if c != nil {
				c.event(l, events[i].Events)
				conns[i] = nil
			}
		}
		l.evConns = conns[:0]
		if len(l.lowat) > 0 {
			l.pollLowat()
		}
		if l.ring != nil {
			l.reap()
		}
		preemptPoint()
		if l.posted.Load() {
			var buf [8]byte
			syscall.RawSyscall(syscall.SYS_READ, uintptr(l.efd), uintptr(unsafe.Pointer(&buf[0])), 8)
			l.posted.Store(false)
			l.mu.Lock()
			tasks, l.tasks = l.tasks, tasks[:0]
			closed := l.closed
			l.mu.Unlock()
			for i, f := range tasks {
				l.runTask(f)
				tasks[i] = nil
			}
			if closed {
				l.mu.Lock()
				syscall.Close(l.ep)
				syscall.Close(l.efd)
				if l.ring != nil {
					l.ring.close()
				}
				l.mu.Unlock()
				return
			}
		}
		for len(l.flushQ) > 0 || len(l.later) > 0 {
			for len(l.flushQ) > 0 {
				l.flush() // a send that completes at once may queue more
			}
			for i := 0; i < len(l.later); i++ { // it may grow meanwhile
				l.runDeferred(l.later[i])
				l.later[i] = nil
			}
			l.later = l.later[:0]
		}
	}
}

// runTask runs a posted function; a panic in it is recovered and given
// to the OnPanic function, so that the loop and the process go on.
func (l *Loop) runTask(f func()) {
	defer func() {
		if v := recover(); v != nil {
			if h := l.onPanic.Load(); h != nil {
				(*h)(v)
			}
		}
	}()
	f()
}

// runDeferred is runTask for a Deferred.
func (l *Loop) runDeferred(d Deferred) {
	defer func() {
		if v := recover(); v != nil {
			if h := l.onPanic.Load(); h != nil {
				(*h)(v)
			}
		}
	}()
	d.RunDeferred()
}

// OnPanic sets the function told of a posted function's panic (Post),
// which the loop recovers; nil: none.
func (l *Loop) OnPanic(f func(v any)) {
	if f == nil {
		l.onPanic.Store(nil)
		return
	}
	l.onPanic.Store(&f)
}

// Adopter returns a function that adopts each socket it is given into
// the next of loops in turn, as route.Pools.Adopt wants it.
func Adopter(loops ...*Loop) func(net.Conn) (net.Conn, error) {
	var next atomic.Uint64
	return func(c net.Conn) (net.Conn, error) {
		lc, err := loops[next.Add(1)%uint64(len(loops))].Adopt(c)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return lc, nil
	}
}

// ErrNotSocket is Adopt's error for a connection without a descriptor.
var ErrNotSocket = errors.New("netloop: not a socket the runtime polls")

// Adopt takes c's socket out of the runtime's poller into the loop: it
// duplicates the descriptor, registers the duplicate, then closes c
// (which deregisters the original without ending the connection) and
// returns a Conn on the duplicate. c must be idle: no reads or writes
// under way. On an error c is left open, so the caller can go on with it.
func (l *Loop) Adopt(c net.Conn) (*Conn, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, ErrNotSocket
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, ErrNotSocket
	}
	fd, err := rawconn.Dup(rc)
	if err != nil {
		return nil, fmt.Errorf("netloop: adopt: %w", err)
	}
	nc, err := l.AdoptFD(fd, c.LocalAddr(), c.RemoteAddr())
	if err != nil {
		return nil, err // AdoptFD closed the duplicate; c is still the caller's
	}
	c.Close()
	return nc, nil
}

// AdoptFD registers fd, a non-blocking socket no other poller has (one
// accept4 just returned, say), and returns a Conn that owns it. fd is
// AdoptFD's from the call on: closed on error.
func (l *Loop) AdoptFD(fd int, laddr, raddr net.Addr) (*Conn, error) {
	nc := &Conn{l: l, fd: fd, laddr: laddr, raddr: raddr,
		rready: true} // what came before adoption raised no edge here
	if err := l.register(nc); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return nc, nil
}

// register adds c to the loop's table and epoll under a fresh id.
func (l *Loop) register(c *Conn) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errors.New("netloop: loop closed")
	}
	l.nextID++
	c.id = l.nextID
	c.batched = l.ring != nil
	ev := c.epollEvent()
	if err := epollCtl(l.ep, syscall.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
		return fmt.Errorf("netloop: epoll_ctl: %w", err)
	}
	l.conns[c.id] = c
	return nil
}

// wait is epoll_wait for at most msec milliseconds (-1: no limit), as a
// raw call or as a system call the runtime sees.
func (l *Loop) wait(events []syscall.EpollEvent, msec int, raw bool) (int, syscall.Errno) {
	// Direct calls: the pointer stays valid only in a call's own
	// argument list.
	var n uintptr
	var e syscall.Errno
	l.waits++
	if raw {
		n, _, e = syscall.RawSyscall6(syscall.SYS_EPOLL_WAIT, uintptr(l.ep), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(msec), 0, 0)
	} else {
		n, _, e = syscall.Syscall6(syscall.SYS_EPOLL_WAIT, uintptr(l.ep), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(msec), 0, 0)
	}
	return int(n), e
}

// epollCtl and closeFD are syscall.EpollCtl and syscall.Close as raw
// calls: neither waits, and a new connection makes three of them on the
// loop thread, which keeps its processor.
func epollCtl(ep, op, fd int, ev *syscall.EpollEvent) error {
	_, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_CTL, uintptr(ep), uintptr(op), uintptr(fd), uintptr(unsafe.Pointer(ev)), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

func closeFD(fd int) error {
	_, _, e := syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// hotWait is how long, in milliseconds, a busy loop waits for its next
// event holding its processor; below the 10 ms after which the runtime
// preempts a goroutine that has run without a break. Going cold and
// back costs more than waiting: at 200 SCRAM connections a second
// (events 5-9 ms apart) 9 ms rather than 5 cut the CPU per connection by
// 12% and the context switches by 18-37% (docs/benchmarks.md).
const hotWait = 9

// epollET is EPOLLET as the uint32 of EpollEvent.Events (the syscall
// package's constant is a negative int).
const epollET = 1 << 31

// preemptPoint gives the scheduler a place to stop the loop goroutine (a
// stop-the-world, a preemption): the loop's own code has no function
// prologue that checks, and a signal that lands in a system call cannot
// preempt it there.
//
//go:noinline
func preemptPoint() { preemptCheck() }

//go:noinline
func preemptCheck() {}
