package proxy_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

func closeStmt(name string) func(*pgconn.Pipeline) {
	return func(p *pgconn.Pipeline) { p.SendDeallocate(name) }
}

func failStep(p *pgconn.Pipeline) { p.SendQueryParams("select 1/0", nil, nil, nil, nil) }

// With CacheUnnamed, the unnamed statement behaves as PostgreSQL's once it
// stands for a named one on the servers (every text below is parsed more
// than once): it follows the client across servers, Describe works,
// Close, a simple Query and a failed or skipped Parse leave the client
// without one.
func TestCachedUnnamedLikePostgres(t *testing.T) {
	const (
		qa = "select $1::int * 2"
		qb = "select 'b:' || $1::text"
	)
	compareDirectWith(t, cfg{cacheUnnamed: true}, func(t *testing.T, a, b *pgconn.PgConn) []string {
		var out []string
		add := func(s ...string) { out = append(out, strings.Join(s, " ")) }
		add(pipe(t, a, prepare("", qa), syncStep)...) // seen once: sent as is
		add(pipe(t, a, prepare("", qa), execPrepared("", "21"), syncStep)...)
		add(pipe(t, b, prepare("", qb), syncStep, prepare("", qb), syncStep)...)
		add(pipe(t, a, execPrepared("", "5"), syncStep)...) // on the server b used last
		add(pipe(t, b, execPrepared("", "x"), syncStep)...)
		add(pipe(t, a, prepare("", qa), execPrepared("", "6"), syncStep)...)
		add(pipe(t, a, closeStmt(""), syncStep)...)
		add(pipe(t, a, execPrepared("", "7"), syncStep)...) // closed: 26000
		add(pipe(t, b, prepare("", qb), execPrepared("", "y"), syncStep)...)
		add(simple(b, "select 1"))
		add(pipe(t, b, execPrepared("", "z"), syncStep)...) // dropped by the Query
		add(pipe(t, a, prepare("", "select nope"), syncStep)...)
		add(pipe(t, a, prepare("", "select nope"), syncStep)...) // fails under its name
		add(pipe(t, a, execPrepared("", "1"), syncStep)...)
		add(pipe(t, a, prepare("", "select nope"), syncStep, execPrepared("", "2"), syncStep)...)
		add(pipe(t, a, prepare("", qa), execPrepared("", "8"), syncStep)...)
		// an error skips the Parse that follows it: no unnamed statement then
		add(pipe(t, a, failStep, prepare("", qa), execPrepared("", "9"), syncStep, execPrepared("", "10"), syncStep)...)
		add(pipe(t, a, prepare("", qa), execPrepared("", "11"), syncStep)...)
		// the same, the Bind sent once the error has come
		add(pipe(t, a, failStep, prepare("", qa), syncStep)...)
		add(pipe(t, a, execPrepared("", "12"), syncStep)...)
		add(pipe(t, a, failStep, syncStep, failStep, prepare("", qa), syncStep)...)
		add(pipe(t, a, execPrepared("", "13"), syncStep)...)
		add(pipe(t, a, prepare("", qa), execPrepared("", "14"), syncStep)...)
		// a failed Bind leaves the statement
		add(pipe(t, a, prepare("", qa), execPrepared("", "1", "2"), syncStep)...)
		add(pipe(t, a, execPrepared("", "15"), syncStep)...)
		// a failed Parse, then skipped ones: none
		add(pipe(t, a, prepare("", "select nope"), prepare("", qa), syncStep)...)
		add(pipe(t, a, execPrepared("", "16"), syncStep)...)
		add(pipe(t, a, prepare("", "select nope"), syncStep, prepare("", qa), syncStep, execPrepared("", "17"), syncStep)...)
		// same text, other parameter types
		add(pipe(t, b, prepare("", qb), execPrepared("", "w"), syncStep)...)
		add(pipe(t, b, func(p *pgconn.Pipeline) { p.SendPrepare("", qb, []uint32{25}) }, execPrepared("", "v"), syncStep)...)
		add(pipe(t, b, func(p *pgconn.Pipeline) { p.SendPrepare("", qb, []uint32{25}) }, execPrepared("", "u"), syncStep)...)
		add(pipe(t, b, prepare("", qb), execPrepared("", "t"), syncStep)...)
		return out
	})
}

// Clients whose search_path differs never share a cached statement: the
// same text means another table to each (with another row type, which
// PostgreSQL would refuse for a shared prepared statement).
func TestCachedUnnamedPerSettings(t *testing.T) {
	c := pgtest.Shared(t)
	admin := connect(t, c.URL())
	for _, sql := range []string{
		"drop schema if exists cu_a, cu_b cascade",
		"create schema cu_a", "create schema cu_b",
		"create table cu_a.t (x int)", "insert into cu_a.t values (1)",
		"create table cu_b.t (x text, y text)", "insert into cu_b.t values ('b', 'y')",
	} {
		if _, err := admin.Exec(context.Background(), sql); err != nil {
			t.Fatal(err)
		}
	}
	compareDirectWith(t, cfg{cacheUnnamed: true}, func(t *testing.T, a, b *pgconn.PgConn) []string {
		var out []string
		add := func(s ...string) { out = append(out, strings.Join(s, " ")) }
		add(simple(a, "set search_path = cu_a"))
		add(simple(b, "set search_path = cu_b"))
		for range 4 {
			add(pipe(t, a, prepare("", "select * from t"), execPrepared(""), syncStep)...)
			add(pipe(t, b, prepare("", "select * from t"), execPrepared(""), syncStep)...)
		}
		return out
	})
}

// A table that changes under a cached statement costs the client at most
// one error per server ("cached plan must not change result type"); the
// next run parses the statement afresh.
func TestCachedUnnamedAfterDDL(t *testing.T) {
	c := pgtest.Shared(t)
	admin := connect(t, c.URL())
	ctx := context.Background()
	const q = "select * from cu_ddl where $1::int > 0"
	for _, sql := range []string{"drop table if exists cu_ddl", "create table cu_ddl (x int)", "insert into cu_ddl values (1)"} {
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 1, cacheUnnamed: true})
	conn := connect(t, r.url("postgres"))
	run := func() ([]string, error) {
		rows, err := conn.Query(ctx, q, pgx.QueryExecModeExec, 1)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var cols []string
		for _, f := range rows.FieldDescriptions() {
			cols = append(cols, f.Name)
		}
		for rows.Next() {
		}
		return cols, rows.Err()
	}
	prepared := func(want int) {
		t.Helper()
		var n int
		if err := conn.QueryRow(ctx, "select count(*) from pg_prepared_statements where name like 'qpr_%' and statement = $1", pgx.QueryExecModeSimpleProtocol, q).Scan(&n); err != nil || n != want {
			t.Fatalf("statements prepared on the server for %q: %d (%v), want %d", q, n, err, want)
		}
	}
	for i := range 3 {
		if _, err := run(); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			prepared(0) // a text parsed once is not kept
		}
	}
	prepared(1)
	if _, err := admin.Exec(ctx, "alter table cu_ddl add column y text"); err != nil {
		t.Fatal(err)
	}
	var errs []string
	var cols []string
	for range 3 {
		got, err := run()
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		cols = got
	}
	if len(errs) > 1 || strings.Join(cols, ",") != "x,y" {
		t.Fatalf("after ALTER TABLE: errors %q, last columns %q; want at most one error, then x,y", errs, cols)
	}
}

// A named statement whose table changed fails as PostgreSQL's does at
// every Bind until the client prepares it again; prepared again (the
// same text, so the same server statement), it gets the new row type.
func TestNamedStatementAfterDDL(t *testing.T) {
	const q = "select * from cu_named"
	compareDirectWith(t, cfg{cacheUnnamed: true}, func(t *testing.T, a, b *pgconn.PgConn) []string {
		var out []string
		add := func(s ...string) { out = append(out, strings.Join(s, " ")) }
		add(simple(b, "drop table if exists cu_named; create table cu_named (x int); insert into cu_named values (1)"))
		add(pipe(t, a, prepare("s", q), execPrepared("s"), syncStep)...)
		add(pipe(t, b, prepare("s", q), execPrepared("s"), syncStep)...)
		add(simple(b, "alter table cu_named add column y text"))
		add(pipe(t, a, execPrepared("s"), syncStep)...)
		add(pipe(t, b, execPrepared("s"), syncStep)...)
		add(pipe(t, a, execPrepared("s"), syncStep)...)
		add(pipe(t, a, closeStmt("s"), prepare("s", q), execPrepared("s"), syncStep)...)
		add(pipe(t, a, execPrepared("s"), syncStep)...)
		// b's statement is the same on the server now: where PostgreSQL
		// keeps failing b until it prepares again, b gets the new rows
		// (docs/qprouter.md)
		return out
	})
}
