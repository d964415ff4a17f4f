package proxy_test

// Review (differential, 5): byte scripts a real driver sends, run directly
// against PostgreSQL 15 and through the proxy in session mode, transaction
// mode on goroutines and transaction mode on the event loop; the answers
// must be the same message for message.

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// z5Step is one write of a client: the answers are read up to the
// ready-th ReadyForQuery, or (ready 0) up to a message whose transcript
// line starts with until.
type z5Step struct {
	desc  string
	in    []byte
	ready int
	until string
	loose bool // compared without ParameterStatus (a documented difference)
}

func z5(st diffStep) z5Step { return z5Step{desc: st.desc, in: st.in, ready: st.ready} }

func z5Msgs(until string, ms ...pgproto3.FrontendMessage) z5Step {
	var in []byte
	var d []string
	ready := 0
	for _, m := range ms {
		in, _ = m.Encode(in)
		d = append(d, fmt.Sprintf("%T", m))
		switch m.(type) {
		case *pgproto3.Sync, *pgproto3.Query, *pgproto3.FunctionCall:
			ready++
		}
	}
	if until != "" {
		ready = 0
	}
	return z5Step{desc: strings.Join(d, " "), in: in, ready: ready, until: until}
}

func z5Loose(st diffStep) z5Step { s := z5(st); s.loose = true; return s }

func z5Line(m pgproto3.BackendMessage) string {
	switch m := m.(type) {
	case *pgproto3.NotificationResponse:
		return fmt.Sprintf("Notification %s %q", m.Channel, m.Payload)
	case *pgproto3.CopyInResponse:
		return fmt.Sprintf("CopyInResponse %d %v", m.OverallFormat, m.ColumnFormatCodes)
	case *pgproto3.CopyOutResponse:
		return fmt.Sprintf("CopyOutResponse %d %v", m.OverallFormat, m.ColumnFormatCodes)
	case *pgproto3.CopyData:
		return fmt.Sprintf("CopyData %q", m.Data)
	case *pgproto3.CopyDone:
		return "CopyDone"
	case *pgproto3.FunctionCallResponse:
		if m.Result == nil {
			return "FunctionCallResponse NULL"
		}
		return fmt.Sprintf("FunctionCallResponse %x", m.Result)
	case *pgproto3.DataRow:
		var vals []string
		for _, v := range m.Values {
			if v == nil {
				vals = append(vals, "NULL")
			} else if len(v) > 64 {
				vals = append(vals, fmt.Sprintf("<%d bytes %q..%q>", len(v), v[:8], v[len(v)-8:]))
			} else {
				vals = append(vals, fmt.Sprintf("%q", v))
			}
		}
		return "DataRow " + strings.Join(vals, ",")
	case *pgproto3.ErrorResponse:
		return fmt.Sprintf("Error %s %s %q", m.Severity, m.Code, m.Message)
	case *pgproto3.NoticeResponse:
		return fmt.Sprintf("Notice %s %s %q", m.Severity, m.Code, m.Message)
	}
	return ""
}

// z5Converse logs in at addr and sends the steps, each in one write or
// (bytewise) one byte per write, and returns the answers to each.
func z5Converse(addr string, steps []z5Step, bytewise bool, params map[string]string) ([][]string, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	fe := pgproto3.NewFrontend(conn, conn)
	p := map[string]string{"user": "postgres", "database": "postgres"}
	for k, v := range params {
		p[k] = v
	}
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: p})
	if err := fe.Flush(); err != nil {
		return nil, err
	}
	if _, err := transcript(conn, fe, 1); err != nil {
		return nil, fmt.Errorf("login: %w", err)
	}
	var out [][]string
	for i, st := range steps {
		if bytewise {
			for j := range st.in {
				if _, err := conn.Write(st.in[j : j+1]); err != nil {
					return out, fmt.Errorf("step %d: %w", i, err)
				}
			}
		} else if _, err := conn.Write(st.in); err != nil {
			return out, fmt.Errorf("step %d: %w", i, err)
		}
		conn.SetDeadline(time.Now().Add(8 * time.Second))
		var got []string
		ready := st.ready
		for {
			if st.ready > 0 && ready == 0 || st.ready == 0 && st.until == "" {
				break
			}
			m, err := fe.Receive()
			if err != nil {
				out = append(out, got)
				return out, fmt.Errorf("step %d (%s): %w after %q", i, st.desc, err, got)
			}
			line := z5Line(m)
			if line == "" {
				l, _ := z5One(m)
				line = l
			}
			got = append(got, line)
			if _, ok := m.(*pgproto3.ReadyForQuery); ok {
				ready--
			}
			if st.ready == 0 && strings.HasPrefix(line, st.until) {
				break
			}
		}
		out = append(out, got)
	}
	return out, nil
}

// z5One is transcript's line for one message.
func z5One(m pgproto3.BackendMessage) (string, bool) {
	switch m := m.(type) {
	case *pgproto3.ParseComplete:
		return "ParseComplete", true
	case *pgproto3.BindComplete:
		return "BindComplete", true
	case *pgproto3.CloseComplete:
		return "CloseComplete", true
	case *pgproto3.NoData:
		return "NoData", true
	case *pgproto3.PortalSuspended:
		return "PortalSuspended", true
	case *pgproto3.EmptyQueryResponse:
		return "EmptyQuery", true
	case *pgproto3.ParameterDescription:
		return fmt.Sprintf("ParameterDescription %v", m.ParameterOIDs), true
	case *pgproto3.RowDescription:
		var cols []string
		for _, f := range m.Fields {
			cols = append(cols, fmt.Sprintf("%s:%d:%d", f.Name, f.DataTypeOID, f.Format))
		}
		return "RowDescription " + strings.Join(cols, ","), true
	case *pgproto3.CommandComplete:
		return "CommandComplete " + string(m.CommandTag), true
	case *pgproto3.ParameterStatus:
		return fmt.Sprintf("ParameterStatus %s=%s", m.Name, m.Value), true
	case *pgproto3.ReadyForQuery:
		return "ReadyForQuery " + string(m.TxStatus), true
	}
	return fmt.Sprintf("%T", m), false
}

type z5Setup struct {
	name string
	cfg  cfg
}

var z5Setups = []z5Setup{
	{"session", cfg{mode: proxy.Session, size: 1, timeout: 3 * time.Second}},
	{"transaction", cfg{mode: proxy.Transaction, size: 1, timeout: 3 * time.Second}},
	{"transaction-loop", cfg{mode: proxy.Transaction, size: 1, timeout: 3 * time.Second, loop: true}},
}

// z5Compare runs steps directly and through each setup, in one write per
// step and one byte per write, and reports the first difference.
func z5Compare(t *testing.T, steps []z5Step, bytewise bool, setups []z5Setup) {
	t.Helper()
	c := pgtest.Shared(t)
	want, err := z5Converse(fmt.Sprintf("127.0.0.1:%d", c.Port), steps, false, nil)
	if err != nil {
		t.Fatalf("direct: %v", err)
	}
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			r := startProxy(t, c, s.cfg)
			got, err := z5Converse(r.addr, steps, bytewise, nil)
			for k := range min(len(got), len(want)) {
				if !slices.Equal(got[k], want[k]) {
					t.Fatalf("step %d: %s\nthrough the proxy:\n  %s\ndirect:\n  %s", k, steps[k].desc,
						strings.Join(got[k], "\n  "), strings.Join(want[k], "\n  "))
				}
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

type z5CStep struct {
	client int
	st     z5Step
}

func z5C(c int, st z5Step) z5CStep { return z5CStep{c, st} }

// z5Multi logs n clients in at addr and runs the steps in order, each
// client's answers read before the next step.
func z5Multi(addr string, n int, params []map[string]string, steps []z5CStep) ([][]string, error) {
	var conns []net.Conn
	var fes []*pgproto3.Frontend
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range n {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			return nil, err
		}
		conns = append(conns, conn)
		fe := pgproto3.NewFrontend(conn, conn)
		fes = append(fes, fe)
		p := map[string]string{"user": "postgres", "database": "postgres"}
		if i < len(params) {
			for k, v := range params[i] {
				p[k] = v
			}
		}
		fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: p})
		if err := fe.Flush(); err != nil {
			return nil, err
		}
		if _, err := transcript(conn, fe, 1); err != nil {
			return nil, fmt.Errorf("login: %w", err)
		}
	}
	var out [][]string
	for i, cs := range steps {
		conn, fe, st := conns[cs.client], fes[cs.client], cs.st
		if _, err := conn.Write(st.in); err != nil {
			return out, err
		}
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		var got []string
		ready := st.ready
		for st.ready > 0 && ready > 0 || st.ready == 0 && st.until != "" {
			m, err := fe.Receive()
			if err != nil {
				out = append(out, got)
				return out, fmt.Errorf("step %d (%d: %s): %w after %q", i, cs.client, st.desc, err, got)
			}
			line := z5Line(m)
			if line == "" {
				line, _ = z5One(m)
			}
			got = append(got, line)
			if _, ok := m.(*pgproto3.ReadyForQuery); ok {
				ready--
			}
			if st.ready == 0 && strings.HasPrefix(line, st.until) {
				break
			}
		}
		out = append(out, got)
	}
	return out, nil
}

func z5CompareMulti(t *testing.T, n int, params []map[string]string, steps []z5CStep, setups []z5Setup) {
	t.Helper()
	c := pgtest.Shared(t)
	want, err := z5Multi(fmt.Sprintf("127.0.0.1:%d", c.Port), n, params, steps)
	if err != nil {
		t.Fatalf("direct: %v", err)
	}
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			r := startProxy(t, c, s.cfg)
			got, err := z5Multi(r.addr, n, params, steps)
			for k := range min(len(got), len(want)) {
				g, w := got[k], want[k]
				if steps[k].st.loose {
					noPS := func(l string) bool { return strings.HasPrefix(l, "ParameterStatus ") }
					g, w = slices.DeleteFunc(slices.Clone(g), noPS), slices.DeleteFunc(slices.Clone(w), noPS)
				}
				if !slices.Equal(g, w) {
					t.Fatalf("step %d (client %d): %s\nthrough the proxy:\n  %s\ndirect:\n  %s", k, steps[k].client, steps[k].st.desc,
						strings.Join(got[k], "\n  "), strings.Join(want[k], "\n  "))
				}
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

var z5TxSetups = []z5Setup{
	{"transaction", cfg{mode: proxy.Transaction, size: 1, timeout: 3 * time.Second}},
	{"transaction-loop", cfg{mode: proxy.Transaction, size: 1, timeout: 3 * time.Second, loop: true}},
	{"transaction-loop-lru1", cfg{mode: proxy.Transaction, size: 1, timeout: 3 * time.Second, loop: true, lru: 1}},
}

// set_config(..., false) is matched anywhere in a statement's text
// (setConfigPattern in splitVarOps), also inside a dollar-quoted function
// body that CREATE FUNCTION only defines, and inside a comment. PostgreSQL's
// session settings do not change; through the proxy in transaction mode
// the client's recorded settings do, and once its next transaction lands
// on a server another client used, the settings replay applies them: its
// search_path becomes pg_catalog and its unqualified tables are not found.
func TestDiff5ReviewFunctionBodySetConfigReplayed(t *testing.T) {
	execDirect(t, "drop table if exists z5fb; create table z5fb (a int); insert into z5fb values (1)")
	defer execDirect(t, "drop table if exists z5fb; drop function if exists z5fb_fn()")
	t.Run("function body", func(t *testing.T) {
		z5CompareMulti(t, 2, nil, []z5CStep{
			z5C(0, z5(query(`create or replace function z5fb_fn() returns void language plpgsql as $$
begin
  perform set_config('search_path', 'pg_catalog', false);
end $$`))),
			z5C(1, z5(query("select 1"))), // the other client uses the server
			z5C(0, z5(query("select a from z5fb"))),
			z5C(0, z5(query("show search_path"))),
		}, z5TxSetups[:2])
	})
	t.Run("comment", func(t *testing.T) {
		z5CompareMulti(t, 2, nil, []z5CStep{
			z5C(0, z5(query("select 2 -- was: set_config('work_mem', '21MB', false)"))),
			z5C(1, z5(query("select 1"))),
			z5C(0, z5(query("show work_mem"))),
		}, z5TxSetups[:2])
	})
}

// COPY FROM STDIN with the data and CopyDone sent without waiting for
// CopyInResponse (as pgx's CopyFrom sends them), twice in one pipeline:
// two COPY Queries pipelined, or two COPY statements in one Query. The
// proxy keeps one copyEndAhead flag, which the first CopyInResponse clears,
// so it takes the second CopyInResponse for a COPY whose data is still to
// come: clientCopying stays set after the COPYs are over. The next Sync is
// then expected to get no answer (a Sync during COPY), and its
// ReadyForQuery cuts the client with FATAL 08006 "unexpected 'Z' with
// nothing outstanding" (in every mode); in transaction mode the server
// also stays with the idle client. PostgreSQL answers everything.
func TestDiff5ReviewPipelinedCopiesWithDataAhead(t *testing.T) {
	execDirect(t, "drop table if exists z5cp; create table z5cp (a int, b text)")
	defer execDirect(t, "drop table if exists z5cp")
	after := []z5Step{
		z5(ext().P("", "select count(*) from z5cp").B("", "").E("").S()),
		z5(query("truncate z5cp")),
	}
	cases := map[string]z5Step{
		"two Queries": z5Msgs("",
			&pgproto3.Query{String: "copy z5cp from stdin"}, &pgproto3.CopyData{Data: []byte("1\ta\n")}, &pgproto3.CopyDone{},
			&pgproto3.Query{String: "copy z5cp from stdin"}, &pgproto3.CopyData{Data: []byte("2\tb\n")}, &pgproto3.CopyDone{}),
		"one Query": z5Msgs("",
			&pgproto3.Query{String: "copy z5cp from stdin; copy z5cp from stdin"},
			&pgproto3.CopyData{Data: []byte("1\ta\n")}, &pgproto3.CopyDone{}, &pgproto3.CopyData{Data: []byte("2\tb\n")}, &pgproto3.CopyDone{}),
	}
	for _, name := range []string{"two Queries", "one Query"} {
		st := cases[name]
		if name == "one Query" {
			st.ready = 1
		}
		t.Run(name, func(t *testing.T) {
			z5Compare(t, append([]z5Step{st}, after...), false, z5Setups)
		})
	}
}
