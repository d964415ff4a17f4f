// handshakeConn: buffered reads for the messages before authentication ends.

package pgwire

import "net"

// handshakeConn reads whatever has arrived, up to its buffer, and serves
// exact byte counts from it: a startup packet or a password message, header
// and body, then costs one read system call instead of two (a client that
// connects for one transaction, pgbench -C, makes several such reads).
// Bytes beyond what was asked for stay buffered; unwrap hands them on in
// front of the connection, so nothing a client pipelined is lost.
type handshakeConn struct {
	net.Conn
	buf  []byte
	r, w int
}

func newHandshakeConn(c net.Conn) *handshakeConn {
	return &handshakeConn{Conn: c, buf: make([]byte, 512)}
}

func (h *handshakeConn) Read(p []byte) (int, error) {
	if h.r == h.w {
		if len(p) >= len(h.buf) {
			return h.Conn.Read(p)
		}
		n, err := h.Conn.Read(h.buf)
		h.r, h.w = 0, n
		if n == 0 {
			return 0, err
		}
	}
	n := copy(p, h.buf[h.r:h.w])
	h.r += n
	return n, nil
}

// buffered is the number of bytes read from the connection and not yet
// served.
func (h *handshakeConn) buffered() int { return h.w - h.r }

// take returns a copy of the bytes still buffered and forgets them.
func (h *handshakeConn) take() []byte {
	rest := append([]byte(nil), h.buf[h.r:h.w]...)
	h.r = h.w
	return rest
}

// unwrap is the connection to go on with: the bare one, or one that first
// serves the bytes still buffered.
func (h *handshakeConn) unwrap() net.Conn {
	if h.r == h.w {
		return h.Conn
	}
	return &prefixConn{Conn: h.Conn, prefix: h.take()}
}
