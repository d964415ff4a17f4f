package proxy_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// Settings follow savepoints, aborted transactions and a Query that
// commits before it fails as PostgreSQL keeps them: the client finds its
// own value again after another client had its server (the proxy
// replays what it believes the client has), and the other client sees
// none of it.
func TestSettingsAcrossSavepoints(t *testing.T) {
	ext := func(sqls ...string) []pgproto3.FrontendMessage {
		var out []pgproto3.FrontendMessage
		for _, q := range sqls {
			out = append(out, &pgproto3.Parse{Query: q}, &pgproto3.Bind{}, &pgproto3.Execute{})
		}
		return append(out, &pgproto3.Sync{})
	}
	cases := []struct {
		name  string
		steps []any // a string is one simple Query; a message list, one extended group
		want  string
	}{
		{"rollback to savepoint", []any{"begin", "set work_mem = '1111kB'", "savepoint a", "set work_mem = '2222kB'", "rollback to a", "commit"}, "1111kB"},
		{"rollback to savepoint in one Query", []any{"begin; set work_mem = '1111kB'; savepoint a; set work_mem = '2222kB'; rollback to savepoint a; commit"}, "1111kB"},
		{"aborted, rolled back to a savepoint, committed", []any{"begin", "set work_mem = '1111kB'", "savepoint a", "select 1/0", "rollback to a", "commit"}, "1111kB"},
		{"aborted, then committed (a rollback)", []any{"begin", "set work_mem = '1111kB'", "select 1/0", "commit"}, "4MB"},
		{"a Query that commits, then fails", []any{"begin", "set work_mem = '1111kB'; commit; select 1/0"}, "1111kB"},
		{"a Query that fails before its commit", []any{"begin", "set work_mem = '1111kB'; select 1/0; commit", "rollback"}, "4MB"},
		{"released savepoint", []any{"begin", "savepoint a", "set work_mem = '1111kB'", "release savepoint a", "commit"}, "1111kB"},
		{"release then rollback to an earlier savepoint", []any{"begin", "savepoint a", "savepoint b", "set work_mem = '1111kB'", "release b", "rollback to a", "commit"}, "4MB"},
		{"the latest savepoint of a name", []any{"begin", "savepoint a", "set work_mem = '1111kB'", "savepoint a", "set work_mem = '2222kB'", "rollback to a", "commit"}, "1111kB"},
		{"quoted savepoint names keep their case", []any{"begin", `savepoint "A"`, "set work_mem = '1111kB'", "savepoint a", "set work_mem = '2222kB'", `rollback to "A"`, "commit"}, "4MB"},
		{"extended group", []any{ext("begin", "set work_mem = '1111kB'", "savepoint a", "set work_mem = '2222kB'", "rollback to a", "commit")}, "1111kB"},
		{"extended, aborted and rolled back to a savepoint", []any{ext("begin", "set work_mem = '1111kB'", "savepoint a"), ext("select 1/0"), ext("rollback to a", "commit")}, "1111kB"},
		{"set_config in a portal suspended after a row", []any{[]pgproto3.FrontendMessage{
			&pgproto3.Parse{Query: "select set_config('work_mem', '1111kB', false) from generate_series(1, 3)"},
			&pgproto3.Bind{}, &pgproto3.Execute{MaxRows: 1}, &pgproto3.Sync{}}}, "1111kB"},
		{"a DO block with semicolons before a SET", []any{"do $$ begin perform 1; end $$; set work_mem = '1111kB'"}, "1111kB"},
		{"a DO block that fails after a SET", []any{"begin", "set work_mem = '1111kB'; do $$ begin perform 1/0; end $$", "rollback"}, "4MB"},
	}
	for _, loop := range []bool{false, true} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("loop=%v %s", loop, tc.name), func(t *testing.T) {
				r := startProxy(t, pgtest.Shared(t), cfg{mode: proxy.Transaction, size: 1, loop: loop})
				a := dialRaw(t, r.addr)
				for _, st := range tc.steps {
					switch st := st.(type) {
					case string:
						a.query(t, st)
					case []pgproto3.FrontendMessage:
						for _, m := range st {
							a.fe.Send(m)
						}
						if err := a.fe.Flush(); err != nil {
							t.Fatal(err)
						}
						a.answers(t, 1)
					}
				}
				b := dialRaw(t, r.addr)
				if got := b.query(t, "show work_mem"); !slices.Equal(got, []string{"4MB"}) {
					t.Errorf("another client on the same server sees work_mem %q", got)
				}
				b.conn.Close()
				if got := a.query(t, "show work_mem"); !slices.Equal(got, []string{tc.want}) {
					t.Errorf("the client's own work_mem: %q, want %s", got, tc.want)
				}
			})
		}
	}
}

// Settings written in every form PostgreSQL takes are followed, and none
// reaches another client: SET name=value in two words, statements after
// comments, a ROLLBACK behind a comment, a replayed statement ending in
// a -- comment, strings with backslash escapes under
// standard_conforming_strings = off, a quoted savepoint name that is the
// unquoted one, and the role, which RESET ALL leaves in place.
func TestSettingsTextForms(t *testing.T) {
	const sp = `"$user", public`
	cases := []struct {
		name        string
		steps       []string
		show        string // what to compare: a SHOW, or a query
		own, others string
	}{
		{"SET name=value", []string{"set search_path=pg_catalog"}, "show search_path", "pg_catalog", sp},
		{"SET name='value'", []string{"set work_mem='1111kB'"}, "show work_mem", "1111kB", "4MB"},
		{"a comment before SET", []string{"/* app */ set work_mem = '1111kB'"}, "show work_mem", "1111kB", "4MB"},
		{"a line comment before SET", []string{"-- app\nset work_mem = '1111kB'"}, "show work_mem", "1111kB", "4MB"},
		{"a comment before ROLLBACK", []string{"set work_mem = '1111kB'", "begin", "reset work_mem", "/* app */ rollback"}, "show work_mem", "1111kB", "4MB"},
		{"a SET ending in a -- comment", []string{"set work_mem = '1111kB' -- note", "set search_path = pg_catalog"}, "show work_mem", "1111kB", "4MB"},
		{"backslash escapes", []string{"set standard_conforming_strings = off", `select 'x\'; set work_mem = ''1111kB''; select '`, "set search_path = pg_catalog"}, "show work_mem", "4MB", "4MB"},
		{"a quoted savepoint name", []string{"begin", `savepoint "a"`, "set work_mem = '1111kB'", "rollback to a", "commit"}, "show work_mem", "4MB", "4MB"},
		{"a -- comment ended by a carriage return", []string{"select 1 -- x\r; set work_mem = '1111kB'"}, "show work_mem", "1111kB", "4MB"},
		{"SET ROLE", []string{"set role pg_monitor"}, "select current_user", "pg_monitor", "postgres"},
		{"SET ROLE, then RESET ALL", []string{"set role pg_monitor", "reset all"}, "select current_user", "pg_monitor", "postgres"},
		{"SET ROLE, then DISCARD ALL", []string{"set role pg_monitor", "discard all"}, "select current_user", "postgres", "postgres"},
		{"SET SESSION AUTHORIZATION resets the role", []string{"set role pg_monitor", "set session authorization postgres"}, "select current_user", "postgres", "postgres"},
		{"SET SESSION CHARACTERISTICS", []string{"set session characteristics as transaction isolation level serializable"}, "show default_transaction_isolation", "serializable", "read committed"},
		{"SET SESSION CHARACTERISTICS, three clauses", []string{"SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY, ISOLATION LEVEL REPEATABLE READ DEFERRABLE"}, "select current_setting('default_transaction_read_only') || current_setting('default_transaction_isolation') || current_setting('default_transaction_deferrable')", "onrepeatable readon", "offread committedoff"},
		{"SET SESSION CHARACTERISTICS not read", []string{"set session characteristics as transaction isolation /* x */ level serializable"}, "show default_transaction_isolation", "read committed", "read committed"},
	}
	for _, loop := range []bool{false, true} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("loop=%v %s", loop, tc.name), func(t *testing.T) {
				r := startProxy(t, pgtest.Shared(t), cfg{mode: proxy.Transaction, size: 1, loop: loop})
				a := dialRaw(t, r.addr)
				for _, st := range tc.steps {
					a.query(t, st)
				}
				b := dialRaw(t, r.addr)
				if got := b.query(t, tc.show); !slices.Equal(got, []string{tc.others}) {
					t.Errorf("another client on the same server: %s = %q, want %s", tc.show, got, tc.others)
				}
				b.conn.Close()
				if got := a.query(t, tc.show); !slices.Equal(got, []string{tc.own}) {
					t.Errorf("the client's own %s: %q, want %s", tc.show, got, tc.own)
				}
			})
		}
	}
}

// Objects made in the pg_temp schema are temporary, as with CREATE TEMP:
// the client keeps its server, and a client on the other server does not
// see them (on a direct connection they exist only in their session).
func TestPgTempSchemaPins(t *testing.T) {
	for _, loop := range []bool{false, true} {
		t.Run(fmt.Sprintf("loop=%v", loop), func(t *testing.T) {
			r := startProxy(t, pgtest.Shared(t), cfg{mode: proxy.Transaction, size: 2, loop: loop})
			a := dialRaw(t, r.addr)
			a.query(t, "create table pg_temp.pins_tmp (secret text)", "insert into pg_temp.pins_tmp values ('of a')",
				"create function pg_temp.pins_f() returns text language sql as 'select ''of a''::text'")
			b := dialRaw(t, r.addr)
			// pg_temp is searched first without being named (b's text
			// names it not, so that b does not pin itself).
			if got := b.query(t, "select secret from pins_tmp"); !slices.Equal(got, []string{"error"}) {
				t.Errorf("another client: %q, want an error (no such table)", got)
			}
			if got := a.query(t, "select secret from pg_temp.pins_tmp", "select pg_temp.pins_f()"); !slices.Equal(got, []string{"of a", "of a"}) {
				t.Errorf("the client itself: %q, want its row and its function's answer", got)
			}
			pinned := 0
			for _, cs := range r.Clients() {
				if cs.Pinned {
					pinned++
				}
			}
			if pinned != 1 {
				t.Errorf("%d clients pinned, want 1", pinned)
			}
		})
	}
}

// RESET and DISCARD ALL return a setting the client gave at startup to
// that value, as on PostgreSQL, from the client's next transaction on
// (the proxy applies startup settings with set_config, so the server's own
// RESET goes to the server connection's defaults; they are set again).
// Another client on the same server keeps its own.
func TestResetKeepsStartupSettings(t *testing.T) {
	for _, loop := range []bool{false, true} {
		t.Run(fmt.Sprintf("loop=%v", loop), func(t *testing.T) {
			r := startProxy(t, pgtest.Shared(t), cfg{mode: proxy.Transaction, size: 1, loop: loop})
			ctx := context.Background()
			a := connect(t, r.url("postgres")+"&application_name=startapp&datestyle=SQL,%20DMY")
			show := func(c *pgx.Conn) string {
				t.Helper()
				var app, ds string
				if err := c.QueryRow(ctx, "select current_setting('application_name'), current_setting('datestyle')", pgx.QueryExecModeSimpleProtocol).Scan(&app, &ds); err != nil {
					t.Fatal(err)
				}
				return app + "|" + ds
			}
			for _, steps := range [][]string{
				{"set application_name = 'other'", "set datestyle = 'ISO, MDY'", "reset all"},
				{"set application_name = 'other'", "reset application_name", "set datestyle = 'ISO, MDY'", "reset datestyle"},
				{"set application_name = 'other'", "discard all"},
				{"begin", "set application_name = 'other'", "reset all", "commit"},
			} {
				for _, st := range steps {
					if _, err := a.Exec(ctx, st, pgx.QueryExecModeSimpleProtocol); err != nil {
						t.Fatalf("%s: %v", st, err)
					}
				}
				if got := show(a); got != "startapp|SQL, DMY" {
					t.Errorf("after %q: %s, want the startup values startapp|SQL, DMY", steps, got)
				}
			}
			b := connect(t, r.url("postgres"))
			if got := show(b); got != "|ISO, MDY" {
				t.Errorf("another client on the same server: %s, want |ISO, MDY", got)
			}
		})
	}
}
