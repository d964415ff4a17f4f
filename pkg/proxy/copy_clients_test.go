package proxy_test

// COPY through the proxy in every mode, message by message next to a
// direct connection: the extended protocol's ignored Syncs, a COPY that
// fails mid-stream, and a replication startup refused.

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// traceMode is a proxy setup: pool mode, event loop or not.
type traceMode struct {
	name string
	mode proxy.Mode
	loop bool
}

// traceModes are the proxy setups the review tests run on.
var traceModes = []traceMode{
	{"session", proxy.Session, false},
	{"transaction", proxy.Transaction, false},
	{"transaction-loop", proxy.Transaction, true},
}

// traceConn is a raw protocol client.
type traceConn struct {
	conn net.Conn
	fe   *pgproto3.Frontend
	// params is the ParameterStatus view the client was given.
	params map[string]string
}

func traceDial(t testing.TB, addr string, params map[string]string) *traceConn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &traceConn{conn: conn, fe: pgproto3.NewFrontend(conn, conn), params: map[string]string{}}
	p := map[string]string{"user": "postgres", "database": "postgres"}
	for k, v := range params {
		p[k] = v
	}
	c.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: p})
	if err := c.fe.Flush(); err != nil {
		t.Fatal(err)
	}
	c.read(t, func(m pgproto3.BackendMessage) bool { _, ok := m.(*pgproto3.ReadyForQuery); return ok })
	return c
}

// send writes messages in one write.
func (c *traceConn) send(t testing.TB, ms ...pgproto3.FrontendMessage) {
	t.Helper()
	for _, m := range ms {
		c.fe.Send(m)
	}
	if err := c.fe.Flush(); err != nil {
		t.Fatal(err)
	}
}

// read reads messages until stop says so and returns a trace of them.
// ParameterStatus messages update params and are left out of the trace.
func (c *traceConn) read(t testing.TB, stop func(pgproto3.BackendMessage) bool) string {
	t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer c.conn.SetReadDeadline(time.Time{})
	var b strings.Builder
	for {
		m, err := c.fe.Receive()
		if err != nil {
			t.Fatalf("after %q: %v", b.String(), err)
			return b.String()
		}
		switch m := m.(type) {
		case *pgproto3.ParameterStatus:
			c.params[m.Name] = m.Value
			continue
		case *pgproto3.BackendKeyData, *pgproto3.AuthenticationOk:
			continue
		}
		b.WriteString(traceOf(m))
		b.WriteString(" ")
		if stop(m) {
			return b.String()
		}
	}
}

// readyN reads up to the n-th ReadyForQuery.
func (c *traceConn) readyN(t testing.TB, n int) string {
	t.Helper()
	return c.read(t, func(m pgproto3.BackendMessage) bool {
		if _, ok := m.(*pgproto3.ReadyForQuery); ok {
			n--
		}
		return n == 0
	})
}

// query runs one simple Query.
func (c *traceConn) query(t testing.TB, sql string) string {
	t.Helper()
	c.send(t, &pgproto3.Query{String: sql})
	return c.readyN(t, 1)
}

func traceOf(m pgproto3.BackendMessage) string {
	switch m := m.(type) {
	case *pgproto3.ParseComplete:
		return "1"
	case *pgproto3.BindComplete:
		return "2"
	case *pgproto3.CloseComplete:
		return "3"
	case *pgproto3.NoData:
		return "n"
	case *pgproto3.RowDescription:
		return "T"
	case *pgproto3.DataRow:
		var vs []string
		for _, v := range m.Values {
			vs = append(vs, string(v))
		}
		return "D(" + strings.Join(vs, ",") + ")"
	case *pgproto3.CommandComplete:
		return "C(" + string(m.CommandTag) + ")"
	case *pgproto3.ErrorResponse:
		return "E(" + m.Code + ")"
	case *pgproto3.NoticeResponse:
		return "N(" + m.Message + ")"
	case *pgproto3.NotificationResponse:
		return "A(" + m.Channel + ":" + m.Payload + ")"
	case *pgproto3.ReadyForQuery:
		return "Z(" + string(m.TxStatus) + ")"
	case *pgproto3.CopyInResponse:
		return "G"
	case *pgproto3.CopyOutResponse:
		return "H"
	case *pgproto3.CopyData:
		return "d(" + strings.TrimSpace(string(m.Data)) + ")"
	case *pgproto3.CopyDone:
		return "c"
	case *pgproto3.EmptyQueryResponse:
		return "I"
	case *pgproto3.ParameterDescription:
		return "t"
	case *pgproto3.PortalSuspended:
		return "s"
	}
	return fmt.Sprintf("%T", m)
}

func isMsg[T pgproto3.BackendMessage](m pgproto3.BackendMessage) bool {
	_, ok := m.(T)
	return ok
}

// compareTraces runs script against a direct connection and through each
// proxy setup and reports where the traces differ.
func compareTraces(t *testing.T, size int, script func(t *testing.T, addr string) []string) {
	compareTracesIn(t, traceModes, size, script)
}

// compareTracesIn is compareTraces through the proxy setups modes only.
func compareTracesIn(t *testing.T, modes []traceMode, size int, script func(t *testing.T, addr string) []string) {
	c := pgtest.Shared(t)
	want := script(t, fmt.Sprintf("127.0.0.1:%d", c.Port))
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m.mode, size: size, loop: m.loop, timeout: 3 * time.Second})
			got := script(t, r.addr)
			for i := range max(len(got), len(want)) {
				var g, w string
				if i < len(got) {
					g = got[i]
				}
				if i < len(want) {
					w = want[i]
				}
				if g != w {
					t.Errorf("step %d: through the proxy %q, direct %q", i, g, w)
				}
			}
		})
	}
}

func execDirect(t testing.TB, sql string) {
	t.Helper()
	c := pgtest.Shared(t)
	d := traceDial(t, fmt.Sprintf("127.0.0.1:%d", c.Port), nil)
	if got := d.query(t, sql); strings.Contains(got, "E(") {
		t.Fatalf("%s: %s", sql, got)
	}
}

// COPY FROM STDIN in the extended protocol, sent as libpq sends it
// (PQexecParams, PQputCopyEnd): Parse, Bind, Describe, Execute and Sync in
// one write, then the data, CopyDone and a second Sync. PostgreSQL ignores
// a Sync that arrives in copy-in mode, so the two Syncs earn a single
// ReadyForQuery. The client's next statement must then work as directly.
func TestCopyExtendedCopyIn(t *testing.T) {
	execDirect(t, "drop table if exists copycl_ext; create table copycl_ext (a int)")
	compareTraces(t, 1, func(t *testing.T, addr string) []string {
		a := traceDial(t, addr, nil)
		var out []string
		a.send(t, &pgproto3.Parse{Query: "copy copycl_ext from stdin"}, &pgproto3.Bind{},
			&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
		out = append(out, a.read(t, isMsg[*pgproto3.CopyInResponse]))
		a.send(t, &pgproto3.CopyData{Data: []byte("1\n2\n")}, &pgproto3.CopyDone{}, &pgproto3.Sync{})
		out = append(out, a.readyN(t, 1))
		out = append(out, a.query(t, "select 42"))
		// and the same with CopyFail
		a.send(t, &pgproto3.Parse{Query: "copy copycl_ext from stdin"}, &pgproto3.Bind{},
			&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
		out = append(out, a.read(t, isMsg[*pgproto3.CopyInResponse]))
		a.send(t, &pgproto3.CopyData{Data: []byte("3\n")}, &pgproto3.CopyFail{Message: "no"}, &pgproto3.Sync{})
		out = append(out, a.readyN(t, 1))
		out = append(out, a.query(t, "select 43"))
		// a second client on the only server, once the first has gone
		// (in session mode it holds its server until then)
		a.conn.Close()
		b := traceDial(t, addr, nil)
		out = append(out, b.query(t, "select 44"))
		return out
	})
	execDirect(t, "drop table if exists copycl_ext")
}

// A COPY FROM STDIN that fails on a bad row (after CopyInResponse) ends
// on the server at once; the client then sends CopyDone and reads the
// error and ReadyForQuery, as pgx's CopyFrom does. In transaction mode its
// server must then go back to the pool, as after any statement: the
// client holding it while idle starves every other client.
func TestCopyFailedCopyReleasesServer(t *testing.T) {
	c := pgtest.Shared(t)
	execDirect(t, "drop table if exists copycl_fail; create table copycl_fail (a int)")
	defer execDirect(t, "drop table if exists copycl_fail")
	for _, m := range traceModes[1:] {
		t.Run(m.name, func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m.mode, size: 1, loop: m.loop, timeout: 2 * time.Second})
			ctx := context.Background()
			a, err := pgconn.Connect(ctx, r.url("postgres"))
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close(ctx)
			// The bad row goes first; the rest comes after the server has
			// failed the COPY, as with any longer input.
			_, err = a.CopyFrom(ctx, &slowReader{chunks: []string{"1\nnot a number\n", "2\n"}}, "copy copycl_fail from stdin")
			if err == nil || !strings.Contains(err.Error(), "22P02") {
				t.Fatalf("bad copy: %v", err)
			}
			// a stays connected and idle; b wants the only server.
			b, err := pgconn.Connect(ctx, r.url("postgres"))
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close(ctx)
			if _, err := b.Exec(ctx, "select 1").ReadAll(); err != nil {
				t.Errorf("another client after a failed COPY: %v", err)
			}
			for _, cs := range r.Clients() {
				if cs.ServerPID != 0 && cs.State == "idle" {
					t.Errorf("idle client %s still holds server %d", cs.Addr, cs.ServerPID)
				}
			}
		})
	}
}

// A client asking for a replication connection (replication=database,
// as pg_recvlogical and logical-replication tools do) is refused at its
// startup with a FATAL: COPY BOTH cannot be pooled. Before 2026-12-05 the
// parameter was dropped and the replication commands failed later with
// a syntax error.
func TestCopyReplicationStartupRefused(t *testing.T) {
	c := pgtest.Shared(t)
	// Direct, IDENTIFY_SYSTEM answers a row on such a connection.
	d, err := pgconn.Connect(context.Background(), c.URL()+"&replication=database")
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.Exec(context.Background(), "IDENTIFY_SYSTEM").ReadAll()
	d.Close(context.Background())
	if err != nil || len(res) != 1 || len(res[0].Rows) != 1 {
		t.Fatalf("direct IDENTIFY_SYSTEM: %v", err)
	}
	for _, m := range traceModes {
		t.Run(m.name, func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m.mode, size: 1, loop: m.loop, timeout: 2 * time.Second})
			conn, err := net.Dial("tcp", r.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fe := pgproto3.NewFrontend(conn, conn)
			fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
				Parameters: map[string]string{"user": "postgres", "database": "postgres", "replication": "database"}})
			fe.Send(&pgproto3.Query{String: "IDENTIFY_SYSTEM"})
			if err := fe.Flush(); err != nil {
				t.Fatal(err)
			}
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			var trace []string
			for {
				msg, err := fe.Receive()
				if err != nil {
					break
				}
				if e, ok := msg.(*pgproto3.ErrorResponse); ok {
					trace = append(trace, e.Severity+" "+e.Code+" "+e.Message)
					if e.Severity == "FATAL" {
						break
					}
				}
				if _, ok := msg.(*pgproto3.ReadyForQuery); ok && len(trace) > 0 {
					break
				}
				if _, ok := msg.(*pgproto3.DataRow); ok {
					trace = append(trace, "row")
				}
			}
			if len(trace) == 0 || !strings.HasPrefix(trace[0], "FATAL 0A000") {
				t.Errorf("a replication startup was accepted as an ordinary session: %q", trace)
			}
		})
	}
}

// slowReader returns its chunks one per Read, pausing before each but
// the first.
type slowReader struct {
	chunks []string
	n      int
}

func (r *slowReader) Read(p []byte) (int, error) {
	if r.n >= len(r.chunks) {
		return 0, io.EOF
	}
	if r.n > 0 {
		time.Sleep(300 * time.Millisecond)
	}
	r.n++
	return copy(p, r.chunks[r.n-1]), nil
}
