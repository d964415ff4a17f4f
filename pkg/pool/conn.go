// Conn: one hijacked server connection and the round trips the pool itself makes on it.

package pool

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Conn is a server connection taken out of pgconn after authentication.
// Whoever acquired it owns R and W until it is released; the pool touches
// them only while the connection is idle.
type Conn struct {
	Net net.Conn
	// Raw is the socket under Net's wrappers when an event loop adopted it
	// (Pool.SetAdopt), nil otherwise.
	Raw    net.Conn
	R      *bufio.Reader
	W      *bufio.Writer
	PID    uint32
	Secret []byte
	// Params are the server's ParameterStatus values; the owner keeps them
	// current with SetParam when it sees ParameterStatus messages. Never
	// change the map in place.
	Params map[string]string
	// Defaults are Params as the server sent them at login, before any
	// client changed a setting: the server's own defaults (never changed).
	Defaults map[string]string
	// State is the owner's bookkeeping (prepared statements, replayed
	// settings); it survives check-in and is dropped with the connection.
	State any

	paramsKey   string // ParamsKey's cache; "" after a change
	defaultsKey string // DefaultsKey's cache

	pool      *Pool
	network   string // for cancel requests: "tcp" or "unix"
	address   string
	created   time.Time
	begun     time.Time // when its connect began (Reconnect compares)
	idleSince time.Time
}

// ConnStat describes a server connection for listings (PgBouncer's SHOW
// SERVERS).
type ConnStat struct {
	PID       uint32
	Addr      string    // the address it reached (host:port or a socket path)
	LocalAddr string    // its own end ("" for a Unix socket)
	Created   time.Time // when it logged in
	IdleSince time.Time // when it last went back to the pool
	// CloseNeeded: it predates a Reconnect and closes when it comes back.
	CloseNeeded bool
}

// Stat describes c. Call it where c's fields cannot change under it: the
// pool's lock for an idle connection, its owner's for one handed out.
func (c *Conn) Stat() ConnStat {
	st := ConnStat{PID: c.PID, Addr: c.address, Created: c.created, IdleSince: c.idleSince, CloseNeeded: c.closeNeeded()}
	if la := c.Net.LocalAddr(); la != nil && la.Network() == "tcp" {
		st.LocalAddr = la.String()
	}
	return st
}

// SetParam records a ParameterStatus the server sent. Params is replaced,
// never changed in place, so that a map once read from it stays as it was:
// a session keeps one as the values its client has seen.
func (c *Conn) SetParam(name, value string) {
	if v, ok := c.Params[name]; ok && v == value {
		return
	}
	p := make(map[string]string, len(c.Params)+1)
	maps.Copy(p, c.Params)
	p[name] = value
	c.Params = p
	c.paramsKey = ""
}

// DefaultsKey identifies the contents of Defaults, as ParamsKey does
// Params'.
func (c *Conn) DefaultsKey() string {
	if c.defaultsKey == "" {
		c.defaultsKey = paramsKeyOf(c.Defaults)
	}
	return c.defaultsKey
}

// ParamsKey identifies the contents of Params: connections of a pool
// usually report the same values, and a session that has seen them once
// needs no comparison with the next connection that has the same key.
func (c *Conn) ParamsKey() string {
	if c.paramsKey == "" {
		c.paramsKey = paramsKeyOf(c.Params)
	}
	return c.paramsKey
}

// paramsKeyOf is the key of a Params map: its names and values in order.
func paramsKeyOf(params map[string]string) string {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteByte('#') // never empty
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(params[k])
		b.WriteByte(0)
	}
	return b.String()
}

// Pool is the pool the connection belongs to.
func (c *Conn) Pool() *Pool { return c.pool }

// ServerError is an ErrorResponse the server sent to a query the pool ran.
type ServerError struct {
	Code    string
	Message string
}

func (e *ServerError) Error() string { return fmt.Sprintf("server error %s: %s", e.Code, e.Message) }

// Exec runs sql with the simple query protocol and waits for
// ReadyForQuery, keeping Params current. Results are dropped; the first
// ErrorResponse is returned as a *ServerError. It returns the final
// transaction status.
func (c *Conn) Exec(ctx context.Context, sql string) (txStatus byte, err error) {
	st, errs, err := c.ExecBatch(ctx, sql)
	if err != nil {
		return 0, err
	}
	return st, errs[0]
}

// ExecBatch sends each of sqls as its own simple Query, all in one write,
// and reads every answer: one round trip for statements that must not
// share a Query (DISCARD ALL refuses to run in a multi-statement one).
// errs[i] is the first ErrorResponse to sqls[i] as a *ServerError, or
// nil; err is an I/O or protocol failure, after which the connection's
// state is unknown. txStatus is the status after the last query.
func (c *Conn) ExecBatch(ctx context.Context, sqls ...string) (txStatus byte, errs []error, err error) {
	if d, ok := ctx.Deadline(); ok {
		c.Net.SetDeadline(d)
		defer c.Net.SetDeadline(time.Time{})
	}
	for _, sql := range sqls {
		var hdr [5]byte
		hdr[0] = 'Q'
		binary.BigEndian.PutUint32(hdr[1:], uint32(4+len(sql)+1))
		c.W.Write(hdr[:])
		c.W.WriteString(sql)
		c.W.WriteByte(0)
	}
	if err := c.W.Flush(); err != nil {
		return 0, nil, err
	}
	errs = make([]error, len(sqls))
	var body []byte
	for i := 0; i < len(sqls); {
		typ, b, err := ReadMessage(c.R, body)
		if err != nil {
			return 0, nil, err
		}
		body = b
		switch typ {
		case 'E':
			if errs[i] == nil {
				errs[i] = ParseError(body)
			}
		case 'S':
			name, value := ParseParameterStatus(body)
			c.SetParam(name, value)
		case 'Z':
			if len(body) != 1 {
				return 0, nil, errors.New("pool: malformed ReadyForQuery")
			}
			txStatus = body[0]
			i++
		}
	}
	return txStatus, errs, nil
}

// ReadMessage reads one whole message into buf (grown as needed).
func ReadMessage(r *bufio.Reader, buf []byte) (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, buf, err
	}
	n := int(binary.BigEndian.Uint32(hdr[1:])) - 4
	if n < 0 || n > 1<<30 {
		return 0, buf, fmt.Errorf("pool: server message %q with length %d", hdr[0], n+4)
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return 0, buf, err
	}
	return hdr[0], buf, nil
}

// ParseError reads an ErrorResponse or NoticeResponse body.
func ParseError(body []byte) *ServerError {
	e := &ServerError{}
	for len(body) > 1 {
		f := body[0]
		i := strings.IndexByte(string(body[1:]), 0)
		if i < 0 {
			break
		}
		v := string(body[1 : 1+i])
		body = body[2+i:]
		switch f {
		case 'C':
			e.Code = v
		case 'M':
			e.Message = v
		}
	}
	return e
}

// ParseParameterStatus reads a ParameterStatus body.
func ParseParameterStatus(body []byte) (name, value string) {
	i := strings.IndexByte(string(body), 0)
	if i < 0 {
		return "", ""
	}
	name = string(body[:i])
	rest := body[i+1:]
	if j := strings.IndexByte(string(rest), 0); j >= 0 {
		rest = rest[:j]
	}
	return name, string(rest)
}

// Cancel asks the server to cancel whatever this connection is running: a
// new connection carrying CancelRequest with the server's key. It returns
// once the server has closed that connection (the request was read) or
// ctx ends.
func (c *Conn) Cancel(ctx context.Context) error {
	var d net.Dialer
	nc, err := d.DialContext(ctx, c.network, c.address)
	if err != nil {
		return err
	}
	defer nc.Close()
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	}
	msg := make([]byte, 12, 12+len(c.Secret))
	binary.BigEndian.PutUint32(msg[0:], uint32(12+len(c.Secret)))
	binary.BigEndian.PutUint32(msg[4:], 80877102)
	binary.BigEndian.PutUint32(msg[8:], c.PID)
	msg = append(msg, c.Secret...)
	if _, err := nc.Write(msg); err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, nc) // the server closes after reading the request
	return err
}

// cancelAddress works out where cancel requests for a server go.
func cancelAddress(host string, port uint16) (network, address string) {
	if strings.HasPrefix(host, "/") {
		return "unix", host + "/.s.PGSQL." + strconv.Itoa(int(port))
	}
	return "tcp", net.JoinHostPort(host, strconv.Itoa(int(port)))
}
