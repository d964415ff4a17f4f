// Gone: finding, without a round trip, an idle server connection whose server hung up.

package pool

import (
	"net"
	"syscall"
	"time"
)

// peekAfter is how long a connection must have been idle before a
// checkout peeks at its socket (serverGone). A server busy with
// transactions comes back sooner and is never peeked, so the hot path
// makes no extra system call; one that sat idle can have been terminated
// (pg_terminate_backend, idle_session_timeout, a restart) meanwhile, and
// PgBouncer, which polls its idle servers, would have dropped it.
const peekAfter = 100 * time.Millisecond

// serverGone tells whether an idle connection's server has spoken or hung
// up since the connection went idle: bytes already buffered, or a
// non-blocking MSG_PEEK that finds bytes (a FATAL before the close) or
// the end of the stream. An idle server has nothing to say, so either
// means the connection is not fit to hand out, as is a socket already
// closed. False when the socket cannot be reached under its wrappers.
func (c *Conn) serverGone() bool {
	if c.R.Buffered() > 0 {
		return true
	}
	onFD := fdFunc(c.Net)
	if onFD == nil {
		return false
	}
	gone := false
	err := onFD(func(fd int) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(fd, b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == syscall.EAGAIN || err == syscall.EINTR:
		case err != nil, n >= 0:
			gone = true // bytes, the end of the stream (0), or a failed socket
		}
	})
	return gone || err != nil // a socket closed under the connection is gone too
}

// fdFunc returns a way to run a function on nc's socket descriptor,
// looking under the pool's byte counter and TLS; nil when there is none.
func fdFunc(nc net.Conn) func(func(fd int)) error {
	for {
		switch x := nc.(type) {
		case *countConn:
			nc = x.Conn
			continue
		case interface{ NetConn() net.Conn }: // *tls.Conn
			nc = x.NetConn()
			continue
		case interface{ Control(func(fd int)) error }: // netloop.Conn
			return x.Control
		case syscall.Conn:
			rc, err := x.SyscallConn()
			if err != nil {
				return nil
			}
			return func(f func(fd int)) error {
				return rc.Control(func(fd uintptr) { f(int(fd)) })
			}
		}
		return nil
	}
}
