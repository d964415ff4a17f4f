// Byte counting on a net.Conn, for traffic metrics.

package pool

import (
	"context"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/rawconn"
)

// countConn reports the bytes of each Read and Write.
type countConn struct {
	net.Conn
	read, wrote func(n int)
}

func (c *countConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && c.read != nil {
		c.read(n)
	}
	return n, err
}

func (c *countConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if n > 0 && c.wrote != nil {
		c.wrote(n)
	}
	return n, err
}

// CountConn wraps c so that read and wrote (either may be nil) are called
// with the size of every Read and Write. Callers buffer, so this is once
// per system call, not per message.
func CountConn(c net.Conn, read, wrote func(n int)) net.Conn {
	return &countConn{Conn: c, read: read, wrote: wrote}
}

// CountingDial wraps dial so that every connection it makes is counted
// (CountConn).
func CountingDial(dial pgconn.DialFunc, read, wrote func(n int)) pgconn.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return CountConn(rawconn.Wrap(c), read, wrote), nil
	}
}
