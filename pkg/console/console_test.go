package console

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/qpkit/qpkit/pkg/pgwire"
)

// serve runs a console for role over a pipe and returns the client's end.
func serve(t *testing.T, src Source, role Role) *pgproto3.Frontend {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	c := &Console{Source: src, Version: "test"}
	cl := &pgwire.Client{Conn: a, Key: pgwire.NewCancelKey(), Startup: pgwire.Startup{Params: map[string]string{"user": "u", "database": "pgbouncer"}}}
	go c.Serve(context.Background(), cl, role)
	b.SetDeadline(time.Now().Add(10 * time.Second))
	fe := pgproto3.NewFrontend(b, b)
	for {
		m, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m.(*pgproto3.ReadyForQuery); ok {
			return fe
		}
	}
}

// query sends q and returns the messages up to ReadyForQuery, by type
// letter, and the error message if any.
func query(t *testing.T, fe *pgproto3.Frontend, q string) (kinds string, errMsg string, tag string) {
	t.Helper()
	fe.Send(&pgproto3.Query{String: q})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	for {
		m, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		switch m := m.(type) {
		case *pgproto3.ReadyForQuery:
			return kinds, errMsg, tag
		case *pgproto3.ErrorResponse:
			kinds += "E"
			errMsg = m.Message
		case *pgproto3.CommandComplete:
			kinds += "C"
			tag = string(m.CommandTag)
		case *pgproto3.EmptyQueryResponse:
			kinds += "I"
		case *pgproto3.RowDescription:
			kinds += "T"
		case *pgproto3.DataRow:
			kinds += "D"
		case *pgproto3.NoticeResponse:
			kinds += "N"
		}
	}
}

// The grammar: case, semicolons, quoted names and empty queries, as
// PgBouncer's console reads them.
func TestCommands(t *testing.T) {
	var paused, resumed, ops []string
	src := Source{
		Disable:   func(db string) error { ops = append(ops, "disable "+db); return nil },
		Enable:    func(db string) error { ops = append(ops, "enable "+db); return nil },
		Reconnect: func(db string) error { ops = append(ops, "reconnect "+db); return nil },
		Pools:     func() []Pool { return []Pool{{Database: "my db", User: "u", ServersActive: 0, Mode: "transaction"}} },
		Databases: func() []Database { return nil },
		Pause:     func(db string) error { paused = append(paused, db); return nil },
		Resume:    func(db string) error { resumed = append(resumed, db); return nil },
		Set: func(key, value string) error {
			if key == "nosuch" {
				return fmt.Errorf("unknown setting %q", key)
			}
			ops = append(ops, "set "+key+"="+value)
			return nil
		},
		KillClient: func(id uint32) error {
			if id == 7 {
				return fmt.Errorf("no client 0x%08x", id)
			}
			ops = append(ops, fmt.Sprintf("kill client %d", id))
			return nil
		},
	}
	fe := serve(t, src, Admin)
	for _, c := range []struct{ q, kinds, tag string }{
		{`pause "my db";`, "C", "PAUSE"},
		{`  Resume   "my db"  `, "C", "RESUME"},
		{"PAUSE", "C", "PAUSE"},
		{"resume;", "C", "RESUME"},
		{"show pools", "TDC", "SHOW"},
		{"SHOW HELP;", "NC", "SHOW"},
		{"disable app", "C", "DISABLE"},
		{"ENABLE app;", "C", "ENABLE"},
		{"RECONNECT", "C", "RECONNECT"},
		{"reconnect app", "C", "RECONNECT"},
		{"KILL_CLIENT 0x0000002a", "C", "KILL_CLIENT"},
		{"kill_client 43;", "C", "KILL_CLIENT"},
		{"SET default_pool_size = 30", "C", "SET"},
		{"set Server_Reset_Query to 'DISCARD ALL; SELECT ''x'''; ", "C", "SET"},
		{"SET query_timeout=2.5;", "C", "SET"},
		{" ; ", "I", ""},
		{"", "I", ""},
	} {
		kinds, msg, tag := query(t, fe, c.q)
		if kinds != c.kinds || tag != c.tag {
			t.Errorf("%q: messages %q tag %q (error %q), want %q %q", c.q, kinds, tag, msg, c.kinds, c.tag)
		}
	}
	if strings.Join(ops, ",") != "disable app,enable app,reconnect ,reconnect app,kill client 42,kill client 43,set default_pool_size=30,set server_reset_query=DISCARD ALL; SELECT 'x',set query_timeout=2.5" {
		t.Errorf("operations %q", ops)
	}
	if len(paused) != 2 || paused[0] != "my db" || paused[1] != "" || len(resumed) != 2 || resumed[0] != "my db" || resumed[1] != "" {
		t.Errorf("paused %q, resumed %q", paused, resumed)
	}
	for q, want := range map[string]string{
		"DISABLE":        "a database is required",
		"SHOW":           "invalid command 'SHOW', use SHOW HELP;",
		"RELOAD now":     "invalid command 'RELOAD now', use SHOW HELP;",
		"PAUSE a b":      "invalid command 'PAUSE a b', use SHOW HELP;",
		"SHOW FDS":       "SHOW FDS is not supported by qprouter's console",
		"show nonsense":  "invalid command 'show nonsense', use SHOW HELP;",
		"SET nosuch = 1": `SET nosuch: unknown setting "nosuch"`,
		"SET x":          "invalid command 'SET x', use SHOW HELP;",
		"SET x = a b":    "invalid command 'SET x = a b', use SHOW HELP;",
		"SUSPEND":        "SUSPEND is not supported by qprouter's console (supported: SHOW, SET, PAUSE, RESUME, KILL, KILL_CLIENT, DISABLE, ENABLE, RECONNECT, WAIT_CLOSE, RELOAD, SHUTDOWN)",
		"KILL_CLIENT":    `KILL_CLIENT needs a client's id: its ptr in SHOW CLIENTS (0x...) or that number in decimal, not ""`,
		"KILL_CLIENT x":  `KILL_CLIENT needs a client's id: its ptr in SHOW CLIENTS (0x...) or that number in decimal, not "x"`,
		"KILL_CLIENT 7":  "no client 0x00000007",
	} {
		if kinds, msg, _ := query(t, fe, q); kinds != "E" || msg != want {
			t.Errorf("%q: %q %q, want the error %q", q, kinds, msg, want)
		}
	}
}

// A stats user may SHOW and nothing else; a user with no role is refused
// at once.
func TestRoles(t *testing.T) {
	src := Source{Pools: func() []Pool { return nil }, Clients: func() []Client { return nil }, Servers: func() []Server { return nil },
		Databases: func() []Database { return nil }}
	fe := serve(t, src, StatsOnly)
	if kinds, msg, _ := query(t, fe, "SHOW LISTS"); kinds != "TDDDDDDC" {
		t.Errorf("SHOW LISTS: %q %q", kinds, msg)
	}
	for _, q := range []string{"PAUSE", "RESUME", "RELOAD", "SHUTDOWN", "KILL_CLIENT 1", "SET pool_size = 1"} {
		if _, msg, _ := query(t, fe, q); msg != "admin access needed" {
			t.Errorf("%s as a stats user: %q", q, msg)
		}
	}

	a, b := net.Pipe()
	defer b.Close()
	c := &Console{Source: src}
	go c.Serve(context.Background(), &pgwire.Client{Conn: a, Startup: pgwire.Startup{Params: map[string]string{}}}, NoAccess)
	b.SetDeadline(time.Now().Add(10 * time.Second))
	m, err := pgproto3.NewFrontend(b, b).Receive()
	if e, ok := m.(*pgproto3.ErrorResponse); err != nil || !ok || e.Severity != "FATAL" || e.Message != "not allowed" {
		t.Errorf("no role: %#v %v", m, err)
	}
}

// Garbage after the welcome ends that client, never the process.
func TestGarbage(t *testing.T) {
	src := Source{Pools: func() []Pool { return nil }}
	for seed := range 20 {
		a, b := net.Pipe()
		done := make(chan struct{})
		c := &Console{Source: src, MaxMessage: 1 << 10}
		go func() {
			defer close(done)
			c.Serve(context.Background(), &pgwire.Client{Conn: a, Key: pgwire.NewCancelKey(), Startup: pgwire.Startup{Params: map[string]string{}}}, Admin)
			a.Close()
		}()
		go func() { // drain what the console writes
			buf := make([]byte, 4096)
			for {
				if _, err := b.Read(buf); err != nil {
					return
				}
			}
		}()
		junk := make([]byte, 64+seed*97)
		for i := range junk {
			junk[i] = byte(i*seed*31 + seed)
		}
		junk[0] = "QPXBE\x00\xffp"[seed%8]
		b.SetWriteDeadline(time.Now().Add(2 * time.Second))
		b.Write(junk)
		b.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("seed %d: the console did not end", seed)
		}
	}
}
