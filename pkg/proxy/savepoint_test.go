package proxy_test

import (
	"fmt"
	"slices"
	"testing"

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
