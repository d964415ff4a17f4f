package duckwire

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// rawClient speaks the protocol message by message.
type rawClient struct {
	t    *testing.T
	conn net.Conn
	fe   *pgproto3.Frontend
	key  *pgproto3.BackendKeyData
}

func dialRaw(t *testing.T, addr string) *rawClient {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	c := &rawClient{t: t, conn: conn, fe: pgproto3.NewFrontend(conn, conn)}
	c.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "raw", "database": "x"}})
	for _, m := range c.until('Z') {
		if k, ok := m.(*pgproto3.BackendKeyData); ok {
			kk := *k
			c.key = &kk
		}
	}
	return c
}

func (c *rawClient) send(msgs ...pgproto3.FrontendMessage) {
	c.t.Helper()
	for _, m := range msgs {
		c.fe.Send(m)
	}
	if err := c.fe.Flush(); err != nil {
		c.t.Fatal(err)
	}
}

// until reads messages up to and including one of type typ, and returns
// them summarized by their type letters through summary.
func (c *rawClient) until(typ byte) []pgproto3.BackendMessage {
	c.t.Helper()
	var out []pgproto3.BackendMessage
	for {
		m, err := c.fe.Receive()
		if err != nil {
			c.t.Fatalf("receive: %v (after %s)", err, summary(out))
		}
		out = append(out, copyMsg(m))
		if msgType(m) == typ {
			return out
		}
	}
}

// copyMsg keeps a message past the next Receive (pgproto3 reuses them).
func copyMsg(m pgproto3.BackendMessage) pgproto3.BackendMessage {
	switch m := m.(type) {
	case *pgproto3.DataRow:
		vals := make([][]byte, len(m.Values))
		for i, v := range m.Values {
			if v != nil {
				vals[i] = append([]byte{}, v...)
			}
		}
		return &pgproto3.DataRow{Values: vals}
	case *pgproto3.ErrorResponse:
		e := *m
		return &e
	case *pgproto3.CommandComplete:
		return &pgproto3.CommandComplete{CommandTag: append([]byte{}, m.CommandTag...)}
	case *pgproto3.ReadyForQuery:
		return &pgproto3.ReadyForQuery{TxStatus: m.TxStatus}
	case *pgproto3.RowDescription:
		r := &pgproto3.RowDescription{Fields: append([]pgproto3.FieldDescription{}, m.Fields...)}
		for i := range r.Fields {
			r.Fields[i].Name = append([]byte{}, r.Fields[i].Name...)
		}
		return r
	case *pgproto3.ParameterDescription:
		return &pgproto3.ParameterDescription{ParameterOIDs: append([]uint32{}, m.ParameterOIDs...)}
	case *pgproto3.ParameterStatus:
		p := *m
		return &p
	}
	return m
}

func msgType(m pgproto3.BackendMessage) byte {
	switch m := m.(type) {
	case *pgproto3.ReadyForQuery:
		return 'Z'
	case *pgproto3.DataRow:
		return 'D'
	case *pgproto3.RowDescription:
		return 'T'
	case *pgproto3.CommandComplete:
		return 'C'
	case *pgproto3.ErrorResponse:
		return 'E'
	case *pgproto3.ParseComplete:
		return '1'
	case *pgproto3.BindComplete:
		return '2'
	case *pgproto3.CloseComplete:
		return '3'
	case *pgproto3.NoData:
		return 'n'
	case *pgproto3.PortalSuspended:
		return 's'
	case *pgproto3.ParameterDescription:
		return 't'
	case *pgproto3.EmptyQueryResponse:
		return 'I'
	case *pgproto3.ParameterStatus:
		return 'S'
	case *pgproto3.BackendKeyData:
		return 'K'
	case *pgproto3.AuthenticationOk:
		return 'R'
	default:
		_ = m
		return '?'
	}
}

// summary renders messages compactly: letters, with the tag of C, the
// code of E, the status of Z and the values of D.
func summary(msgs []pgproto3.BackendMessage) string {
	var b strings.Builder
	for _, m := range msgs {
		switch m := m.(type) {
		case *pgproto3.CommandComplete:
			fmt.Fprintf(&b, "C(%s) ", m.CommandTag)
		case *pgproto3.ErrorResponse:
			fmt.Fprintf(&b, "E(%s) ", m.Code)
		case *pgproto3.ReadyForQuery:
			fmt.Fprintf(&b, "Z(%c) ", m.TxStatus)
		case *pgproto3.DataRow:
			var vals []string
			for _, v := range m.Values {
				if v == nil {
					vals = append(vals, "NULL")
				} else {
					vals = append(vals, string(v))
				}
			}
			fmt.Fprintf(&b, "D(%s) ", strings.Join(vals, ","))
		default:
			fmt.Fprintf(&b, "%c ", msgType(m))
		}
	}
	return strings.TrimSpace(b.String())
}
