// Accept: one client's startup and authentication under a deadline; Client and its Welcome.

package pgwire

import (
	"context"
	"encoding/binary"
	"errors"
	"maps"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Client is an authenticated client.
type Client struct {
	Conn    net.Conn // a *tls.Conn when Startup.TLS
	Startup Startup
	Key     CancelKey // a fresh synthetic key for this client
	authOK  bool      // AuthenticationOk is still to be sent (DeferAuthOK)
}

// Accept runs the startup and authentication on conn. It returns the
// authenticated client (its net.Conn may now be a *tls.Conn) with its
// startup parameters, after sending AuthenticationOk; or, for a
// CancelRequest, a Startup whose Cancel is set and a nil *Client. Errors
// have already been reported to the client as an ErrorResponse where the
// protocol allows; a refusal is an *Error (IsAuthFailure tells a failed
// password check). On error the Startup holds what the client sent so far,
// for logging, and may be nil.
//
// The whole exchange is bounded by cfg.StartupTimeout and by ctx. Accept
// clears conn's deadline before it returns and never closes conn: the
// caller does, whatever the outcome.
func Accept(ctx context.Context, conn net.Conn, cfg *ServerConfig) (*Client, *Startup, error) {
	if cfg == nil {
		cfg = &ServerConfig{}
	}
	deadline := time.Now().Add(cfg.startupTimeout())
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := conn.SetDeadline(deadline); err != nil {
		return nil, nil, err
	}
	var mu sync.Mutex
	finished := false
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !finished {
			conn.SetDeadline(time.Unix(1, 0)) // wakes any blocked read or write
		}
	})
	defer func() {
		stop()
		mu.Lock()
		finished = true
		mu.Unlock()
		conn.SetDeadline(time.Time{})
	}()

	cl, st, err := accept(conn, cfg)
	if err != nil && ctx.Err() != nil {
		err = errors.Join(ctx.Err(), err)
	}
	return cl, st, err
}

func accept(conn net.Conn, cfg *ServerConfig) (*Client, *Startup, error) {
	st := &Startup{}
	c, err := startup(conn, cfg, st)
	if err != nil || st.Cancel != nil {
		return nil, st, err
	}
	if cfg.RequireTLS && !st.TLS && !unixClient(conn.RemoteAddr()) {
		return nil, st, reply(c, fatal(CodeInvalidAuthorization, "SSL required"))
	}
	if err := authenticate(c, cfg, st, conn.RemoteAddr()); err != nil {
		return nil, st, err
	}
	if hc, ok := c.(*handshakeConn); ok {
		c = hc.unwrap()
	}
	if cfg.DeferAuthOK {
		return &Client{Conn: c, Startup: *st, Key: NewCancelKey(), authOK: true}, st, nil
	}
	if err := send(c, &pgproto3.AuthenticationOk{}); err != nil {
		return nil, st, err
	}
	return &Client{Conn: c, Startup: *st, Key: NewCancelKey()}, st, nil
}

// Welcome sends the ParameterStatus messages (in name order), BackendKeyData
// with c.Key and ReadyForQuery('I'), in one write, after AuthenticationOk
// when ServerConfig.DeferAuthOK left it to Welcome.
func (c *Client) Welcome(params map[string]string) error {
	return c.WelcomeStatus(AppendParameterStatuses(nil, params))
}

// WelcomeStatus is Welcome with the ParameterStatus messages already
// encoded (AppendParameterStatus): a proxy keeps them per server
// connection instead of encoding them for every client.
func (c *Client) WelcomeStatus(status []byte) error {
	buf := make([]byte, 0, 9+len(status)+12+len(c.Key.Secret)+6)
	if c.authOK {
		buf = append(buf, 'R', 0, 0, 0, 8, 0, 0, 0, 0) // AuthenticationOk
		c.authOK = false
	}
	buf = append(buf, status...)
	buf = append(buf, 'K')
	buf = binary.BigEndian.AppendUint32(buf, uint32(4+4+len(c.Key.Secret)))
	buf = binary.BigEndian.AppendUint32(buf, c.Key.PID)
	buf = append(buf, c.Key.Secret...)
	buf = append(buf, 'Z', 0, 0, 0, 5, 'I')
	_, err := c.Conn.Write(buf)
	return err
}

// AppendParameterStatuses appends a ParameterStatus message for each of
// params, in name order.
func AppendParameterStatuses(dst []byte, params map[string]string) []byte {
	for _, name := range slices.Sorted(maps.Keys(params)) {
		dst = AppendParameterStatus(dst, name, params[name])
	}
	return dst
}

// AppendParameterStatus appends a ParameterStatus message.
func AppendParameterStatus(dst []byte, name, value string) []byte {
	dst = append(dst, 'S')
	dst = binary.BigEndian.AppendUint32(dst, uint32(4+len(name)+1+len(value)+1))
	dst = append(dst, name...)
	dst = append(dst, 0)
	dst = append(dst, value...)
	return append(dst, 0)
}

// unixClient tells whether a client came over a Unix socket, which
// RequireTLS leaves alone: PostgreSQL has no TLS there and its clients
// never ask for it, and PgBouncer requires TLS "except on unix socket".
func unixClient(a net.Addr) bool {
	return a != nil && a.Network() == "unix" // also a wrapped *net.UnixAddr (the peer's uid)
}
