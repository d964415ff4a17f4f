// TCP_DEFER_ACCEPT on the listening socket (Linux).

package proxyserver

import "syscall"

// deferAcceptSeconds is how long the kernel holds a connection that sends
// nothing before handing it over anyway (PgBouncer's hard-coded 45).
const deferAcceptSeconds = 45

// deferAccept is a net.ListenConfig.Control that sets TCP_DEFER_ACCEPT: a
// PostgreSQL client speaks first, so the kernel queues a connection for
// accept only once its startup packet (or SSLRequest) came, and the
// accept and the first read happen in one wake-up instead of two. Failing
// to set it is not an error: the listener works without it.
func deferAccept(_, _ string, c syscall.RawConn) error {
	return c.Control(func(fd uintptr) {
		syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_DEFER_ACCEPT, deferAcceptSeconds)
	})
}
