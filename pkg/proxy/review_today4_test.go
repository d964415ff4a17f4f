package proxy_test

// Review of 2921853 (kept welcome settings, session-mode texts).

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// On PostgreSQL, RESET returns a setting to its session's reset value, the
// one the session started with: an ALTER DATABASE ... SET made since does
// not change it. keepWelcome keeps the welcome TimeZone only when the
// client never SET it itself; a client that SET its TimeZone and then
// RESETs it, on a server of the pool that reports other defaults, ends in
// that server's default instead of its welcome value.
func TestToday4ReviewResetAfterOwnSetKeepsWelcome(t *testing.T) {
	execDirect(t, "drop database if exists zz4_tz with (force)")
	execDirect(t, "create database zz4_tz")
	defer execDirect(t, "drop database if exists zz4_tz with (force)")
	script := func(t *testing.T, addr string) []string {
		execDirect(t, "alter database zz4_tz set timezone = 'America/Sao_Paulo'")
		a := traceDial(t, addr, map[string]string{"database": "zz4_tz"})
		var out []string
		out = append(out, a.query(t, "show timezone"))
		a.query(t, "set timezone = 'Europe/Paris'")
		execDirect(t, "alter database zz4_tz set timezone = 'Pacific/Chatham'")
		b := traceDial(t, addr, map[string]string{"database": "zz4_tz"})
		b.query(t, "begin") // holds the server a had, if it has no other
		a.query(t, "reset timezone")
		out = append(out, a.query(t, "show timezone"))
		a.query(t, "set timezone = 'Europe/Paris'")
		a.query(t, "reset all")
		out = append(out, a.query(t, "show timezone"))
		b.query(t, "commit")
		return out
	}
	compareTracesIn(t, traceModes[1:], 2, script)
}

// welcomeDiffers compares the client's view with the server's current
// Params, which carry what the previous client set (here its startup
// application_name), not the server's defaults: no server of this pool
// has other defaults, yet a client that merely follows another one on a
// server is given "kept" settings, and two clients with the very same
// settings (none) now need a settings replay (RESET ALL and set_config,
// one more round trip) at every switch between them. Before the change
// they shared the server without one.
func TestToday4ReviewKeptSettingsFromPreviousClientCauseReplays(t *testing.T) {
	c := pgtest.Shared(t)
	for _, m := range traceModes[1:] {
		t.Run(m.name, func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m.mode, size: 1, loop: m.loop, timeout: 3 * time.Second})
			p1 := traceDial(t, r.addr, nil)
			p2 := traceDial(t, r.addr, nil)
			x := traceDial(t, r.addr, map[string]string{"application_name": "zz4_other"})
			p1.query(t, "select 1")
			x.query(t, "select 1")
			p1.query(t, "select 1") // replayed: x's settings were on the server
			before := r.replays.Load()
			for range 3 {
				p2.query(t, "select 1")
				p1.query(t, "select 1")
			}
			if n := r.replays.Load() - before; n != 0 {
				t.Errorf("two clients with the same (no) settings, alternating on one server: %d settings replays, want 0", n)
			}
		})
	}
}

// Session mode keeps the texts of named statements for the digests, and
// dropTexts now forgets them at a SQL DEALLOCATE, but only one sent as a
// simple Query. psycopg 3 evicts its prepared statements with a
// DEALLOCATE sent through the extended protocol (_exec_command:
// PQsendQueryParams), as JDBC sends every statement: the text stays, and
// the statement PREPAREd again under that name is reported under the old,
// unrelated text.
func TestToday4ReviewSessionTextStaleAfterExtendedDeallocate(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Session, size: 2, timeout: 3 * time.Second, events: true})
	a := traceDial(t, r.addr, nil)
	a.send(t, &pgproto3.Parse{Name: "zz4s", Query: "SELECT 1 AS zz4_old"}, &pgproto3.Sync{})
	a.readyN(t, 1)
	// DEALLOCATE as PQsendQueryParams sends it
	a.send(t, &pgproto3.Parse{Query: "DEALLOCATE zz4s"}, &pgproto3.Bind{},
		&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
	if got := a.readyN(t, 1); !strings.Contains(got, "C(DEALLOCATE)") {
		t.Fatalf("setup: %s", got)
	}
	if got := a.query(t, "PREPARE zz4s AS SELECT 2 AS zz4_new"); strings.Contains(got, "E(") {
		t.Fatalf("setup: %s", got)
	}
	a.send(t, &pgproto3.Bind{PreparedStatement: "zz4s"}, &pgproto3.Execute{}, &pgproto3.Sync{})
	if got := a.readyN(t, 1); !strings.Contains(got, "D(2)") {
		t.Fatalf("setup: %s", got)
	}
	a.query(t, "select 'zz4_end'")
	for {
		select {
		case e := <-r.events:
			if strings.Contains(e.SQL, "zz4_old") {
				t.Errorf("the Execute of zz4s (now SELECT 2 AS zz4_new) is reported as %q, a statement deallocated before it ever ran", e.SQL)
			}
			if strings.Contains(e.SQL, "zz4_end") {
				return
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no event for the last query")
		}
	}
}
