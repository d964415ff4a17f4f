// Tests of results, parameters, limits, errors and timing against a real server.

package pgexec

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

func TestSelect1(t *testing.T) {
	e := newExec(t, newPool(t, 2, true), Options{})
	res := run(t, e, "SELECT 1")
	want := `{"columns":[{"name":"?column?","type":"int4"}],"rows":[[1]],"row_count":1,"truncated":false}`
	if string(res.JSON) != want {
		t.Fatalf("got  %s\nwant %s", res.JSON, want)
	}
	if res.Rows != 1 || res.Truncated || res.Command != "SELECT 1" {
		t.Fatalf("result %+v", res)
	}
	if len(res.Columns) != 1 || res.Columns[0] != (Column{Name: "?column?", Type: "int4", OID: 23}) {
		t.Fatalf("columns %+v", res.Columns)
	}
	tm := res.Timing
	if tm.Pool <= 0 || tm.Txn <= 0 || tm.DB <= 0 || tm.Serialize <= 0 || tm.Total < tm.Parse+tm.Pool+tm.Txn+tm.DB {
		t.Fatalf("timing %+v", tm)
	}
}

func TestAppendsToDst(t *testing.T) {
	e := newExec(t, newPool(t, 1, true), Options{})
	res, err := e.Run(testCtx(t), "SELECT 'x' AS a", nil, []byte("prefix:"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(res.JSON), `prefix:{"columns":[{"name":"a","type":"text"}],"rows":[["x"]]`) {
		t.Fatalf("got %s", res.JSON)
	}
}

func TestParams(t *testing.T) {
	e := newExec(t, newPool(t, 1, true), Options{})
	res := run(t, e, `SELECT $1::int + $2::int AS s, $3::text AS t, $4::bool AS b, $5::int AS n, $6::numeric AS d,
		$7::jsonb AS j, $8::float8 AS f, $9 AS u`,
		1, 2.0, "it's", true, nil, json.Number("12.50"), map[string]any{"k": []any{1, "v"}}, 0.25, "untyped")
	want := `"rows":[[3,"it's",true,null,12.50,{"k": [1, "v"]},0.25,"untyped"]]`
	if !strings.Contains(string(res.JSON), want) {
		t.Fatalf("got %s\nwant %s", res.JSON, want)
	}
	if res.Columns[7].Type != "text" {
		t.Fatalf("an untyped parameter should be inferred as text, got %s", res.Columns[7].Type)
	}

	_, err := e.Run(testCtx(t), "SELECT $1", []any{struct{}{}}, nil)
	if err == nil || !strings.Contains(err.Error(), "parameter $1") {
		t.Fatalf("unsupported parameter type: %v", err)
	}
	qe := queryErrParams(t, e, "SELECT $1::int", "not a number")
	if qe.SQLState != "22P02" {
		t.Fatalf("bad parameter value: %+v", qe)
	}
	qe = queryErrParams(t, e, "SELECT $1::int, $2::int", 1)
	if qe.SQLState != "08P01" {
		t.Fatalf("parameter count mismatch: %+v", qe)
	}
	assertPoolIdle(t, e.pool)
}

func queryErrParams(t *testing.T, e *Executor, sql string, params ...any) *QueryError {
	t.Helper()
	_, err := e.Run(testCtx(t), sql, params, nil)
	var qe *QueryError
	if !errors.As(err, &qe) {
		t.Fatalf("%s: want *QueryError, got %v", sql, err)
	}
	return qe
}

func TestTypes(t *testing.T) {
	e := newExec(t, newPool(t, 2, true), Options{})
	cases := []struct{ expr, typ, want string }{
		{"1::int2", "int2", `1`},
		{"(-2147483648)::int4", "int4", `-2147483648`},
		{"9007199254740992::int8", "int8", `9007199254740992`},
		{"(-9007199254740992)::int8", "int8", `-9007199254740992`},
		{"9007199254740993::int8", "int8", `"9007199254740993"`},
		{"(-9223372036854775808)::int8", "int8", `"-9223372036854775808"`},
		{"123.4500::numeric", "numeric", `123.4500`},
		{"0.000123456789012345::numeric", "numeric", `0.000123456789012345`},
		{"12345678901234567890.5::numeric", "numeric", `"12345678901234567890.5"`},
		{"1e20::numeric", "numeric", `"100000000000000000000"`},
		{"'NaN'::numeric", "numeric", `"NaN"`},
		{"1.5::float8", "float8", `1.5`},
		{"1e300::float8", "float8", `1e+300`},
		{"0.1::float4", "float4", `0.1`},
		{"'NaN'::float8", "float8", `"NaN"`},
		{"'Infinity'::float8", "float8", `"Infinity"`},
		{"'-Infinity'::float4", "float4", `"-Infinity"`},
		{"true", "bool", `true`},
		{"false", "bool", `false`},
		{`E'a"b\\c\n\t\x01\u00e9\U0001F600'`, "text", `"a\"b\\c\n\t\u0001é😀"`},
		{"'x'::varchar(3)", "varchar", `"x"`},
		{"'ab'::char(3)", "bpchar", `"ab "`},
		{"'pg_class'::name", "name", `"pg_class"`},
		{`'\x00ff10'::bytea`, "bytea", `"AP8Q"`},
		{`''::bytea`, "bytea", `""`},
		{"'2024-02-29'::date", "date", `"2024-02-29"`},
		{"'2024-01-02 03:04:05.123456'::timestamp", "timestamp", `"2024-01-02T03:04:05.123456"`},
		{"'2024-01-02 03:04:05'::timestamp", "timestamp", `"2024-01-02T03:04:05"`},
		{"'2024-01-02 03:04:05.5+02'::timestamptz", "timestamptz", `"2024-01-02T01:04:05.5+00:00"`},
		{"'infinity'::timestamptz", "timestamptz", `"infinity"`},
		{"'0044-03-15 12:00:00 BC'::timestamp", "timestamp", `"0044-03-15 12:00:00 BC"`},
		{"'12:30:00'::time", "time", `"12:30:00"`},
		{"'1 day 02:00'::interval", "interval", `"1 day 02:00:00"`},
		{`'{"a": [1, 2.5, null]}'::json`, "json", `{"a": [1, 2.5, null]}`},
		{`'{"b":1,"a":"x"}'::jsonb`, "jsonb", `{"a": "x", "b": 1}`},
		{"'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid", "uuid", `"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"`},
		{"'10.0.0.1/8'::inet", "inet", `"10.0.0.1/8"`},
		{"NULL::int4", "int4", `null`},
		{"NULL::text", "text", `null`},
		{"NULL", "text", `null`},
		{"'(1,2)'::point", "oid:600", `"(1,2)"`},
		{"ARRAY[1,2,NULL]::int4[]", "int4[]", `[1,2,null]`},
		{"ARRAY[[1,2],[3,4]]", "int4[]", `[[1,2],[3,4]]`},
		{"'{}'::int[]", "int4[]", `[]`},
		{`ARRAY['a b', 'c"d', NULL, 'NULL', '', 'e\f', '{x}']`, "text[]", `["a b","c\"d",null,"NULL","","e\\f","{x}"]`},
		{"ARRAY[true, false]", "bool[]", `[true,false]`},
		{"ARRAY[9007199254740993::int8, 1]", "int8[]", `["9007199254740993",1]`},
		{"ARRAY['NaN'::float8, 2.5]", "float8[]", `["NaN",2.5]`},
		{"ARRAY[1.50::numeric]", "numeric[]", `[1.50]`},
		{`ARRAY['\x01'::bytea, NULL]`, "bytea[]", `["AQ==",null]`},
		{`ARRAY['{"a": "q\"x"}'::jsonb]`, "jsonb[]", `[{"a": "q\"x"}]`},
		{"ARRAY['2024-01-02 03:04:05+00'::timestamptz]", "timestamptz[]", `["2024-01-02T03:04:05+00:00"]`},
		{"ARRAY['2024-01-02'::date]", "date[]", `["2024-01-02"]`},
		{"'[0:1]={1,2}'::int[]", "int4[]", `"[0:1]={1,2}"`},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			res := run(t, e, "SELECT "+c.expr+" AS v")
			if got := res.Columns[0].Type; got != c.typ {
				t.Errorf("type %s, want %s", got, c.typ)
			}
			want := `"rows":[[` + c.want + `]]`
			if !strings.Contains(string(res.JSON), want) {
				t.Errorf("got  %s\nwant %s", res.JSON, want)
			}
		})
	}
}

func TestColumnNamesEscaped(t *testing.T) {
	e := newExec(t, newPool(t, 1, true), Options{})
	res := run(t, e, `SELECT 1 AS "we""ird\name", 2 AS "日本"`)
	want := `{"columns":[{"name":"we\"ird\\name","type":"int4"},{"name":"日本","type":"int4"}]`
	if !strings.HasPrefix(string(res.JSON), want) {
		t.Fatalf("got %s", res.JSON)
	}
}

func TestNoRowsAndUtility(t *testing.T) {
	e := newExec(t, newPool(t, 1, true), Options{})
	res := run(t, e, "SELECT 1 AS a WHERE false")
	if string(res.JSON) != `{"columns":[{"name":"a","type":"int4"}],"rows":[],"row_count":0,"truncated":false}` {
		t.Fatalf("got %s", res.JSON)
	}
	res = run(t, e, "SHOW default_transaction_read_only")
	if !strings.Contains(string(res.JSON), `"rows":[["on"]]`) {
		t.Fatalf("got %s", res.JSON)
	}
	res = run(t, e, "SHOW transaction_read_only")
	if !strings.Contains(string(res.JSON), `"rows":[["on"]]`) {
		t.Fatalf("the statement must run in a read-only transaction: %s", res.JSON)
	}
	res = run(t, e, "")
	if string(res.JSON) != `{"columns":[],"rows":[],"row_count":0,"truncated":false}` {
		t.Fatalf("empty statement: %s", res.JSON)
	}
	assertPoolIdle(t, e.pool)
}

func TestRowCap(t *testing.T) {
	e := newExec(t, newPool(t, 1, true), Options{MaxRows: 100})
	res := run(t, e, "SELECT g FROM generate_series(1, 1000) g")
	if res.Rows != 100 || !res.Truncated || res.TruncatedBy != "rows" || res.Command != "" {
		t.Fatalf("1000 rows, cap 100: %+v", res)
	}
	if !strings.HasSuffix(string(res.JSON), `,[99],[100]],"row_count":100,"truncated":true,"truncated_by":"rows"}`) {
		t.Fatalf("tail of %s", res.JSON[len(res.JSON)-80:])
	}
	res = run(t, e, "SELECT g FROM generate_series(1, 100) g")
	if res.Rows != 100 || res.Truncated || res.Command != "SELECT 100" {
		t.Fatalf("exactly 100 rows: %+v", res)
	}
	res = run(t, e, "SELECT g FROM generate_series(1, 101) g")
	if res.Rows != 100 || res.TruncatedBy != "rows" {
		t.Fatalf("101 rows: %+v", res)
	}
	assertPoolIdle(t, e.pool)
}

// TestRowCapStopsTheServer shows the server stops after MaxRows+1 rows: a
// ten-billion-row set-returning function in the select list is evaluated
// one row per fetch, so producing it all would take hours.
func TestRowCapStopsTheServer(t *testing.T) {
	e := newExec(t, newPool(t, 1, true), Options{MaxRows: 10, StatementTimeout: 60e9})
	res := run(t, e, "SELECT generate_series(1, 10000000000) AS g")
	if res.Rows != 10 || res.TruncatedBy != "rows" {
		t.Fatalf("%+v", res)
	}
	if res.Timing.DB > 10e9 { // generous: the machine may be loaded
		t.Fatalf("took %v: the whole result was computed", res.Timing.DB)
	}
	assertPoolIdle(t, e.pool)
}

func TestByteCap(t *testing.T) {
	e := newExec(t, newPool(t, 1, true), Options{MaxBytes: 1024})
	res := run(t, e, "SELECT g, repeat('x', 100) AS pad FROM generate_series(1, 100) g")
	if res.TruncatedBy != "bytes" || res.Rows == 0 || res.Rows >= 100 || len(res.JSON) > 1024 {
		t.Fatalf("rows %d by %q len %d: %s", res.Rows, res.TruncatedBy, len(res.JSON), res.JSON)
	}
	// One more row would not have fitted.
	perRow := len(`,[10,"`) + 100 + len(`"]`)
	if len(res.JSON)+perRow <= 1024-trailerRoom {
		t.Fatalf("stopped early: %d bytes", len(res.JSON))
	}
	// A first row that does not fit leaves an empty, valid document.
	res = run(t, e, "SELECT repeat('y', 2000) AS big")
	if res.Rows != 0 || res.TruncatedBy != "bytes" {
		t.Fatalf("%+v", res)
	}
	// Many more rows than fit: later rows are read but not copied.
	e2 := newExec(t, e.pool, Options{MaxBytes: 1024, MaxRows: 100000})
	res = run(t, e2, "SELECT g, repeat('x', 100) AS pad FROM generate_series(1, 100000) g")
	if res.TruncatedBy != "bytes" || len(res.JSON) > 1024 {
		t.Fatalf("%+v", res)
	}
	assertPoolIdle(t, e.pool)
}

func TestValueTooLarge(t *testing.T) {
	e := newExec(t, newPool(t, 1, true), Options{MaxValueBytes: 1000, MaxBytes: 1 << 20})
	// A row within the wire limit (one value, one NULL) with one value over
	// the limit: refused while reading, the connection stays.
	qe := queryErr(t, e, "SELECT repeat('x', 1500) AS body, NULL::text AS other")
	if qe.SQLState != "54000" || qe.Stage != StageFetch || !strings.Contains(qe.Message, `column "body" of row 1 is 1500 bytes`) {
		t.Fatalf("%+v", qe)
	}
	if e.DestroyedConns() != 0 {
		t.Fatal("a value refused after reading should not cost the connection")
	}
	// A row message larger than one maximal value per column is refused
	// before it is read into memory; the connection cannot continue.
	qe = queryErr(t, e, "SELECT repeat('x', 5000) AS body")
	if qe.SQLState != "54000" || qe.Stage != StageFetch {
		t.Fatalf("%+v", qe)
	}
	if e.DestroyedConns() != 1 {
		t.Fatalf("destroyed %d, want 1", e.DestroyedConns())
	}
	run(t, e, "SELECT repeat('x', 1000) AS fits")
	assertPoolIdle(t, e.pool)
}

func TestErrors(t *testing.T) {
	e := newExec(t, newPool(t, 1, true), Options{})
	qe := queryErr(t, e, "SELECT * FROM no_such_table")
	if qe.SQLState != "42P01" || qe.Position != 15 || qe.Stage != StageQuery || !strings.Contains(qe.Message, "no_such_table") {
		t.Fatalf("%+v", qe)
	}
	qe = queryErr(t, e, "SELECT no_such_function(1)")
	if qe.SQLState != "42883" || qe.Hint == "" {
		t.Fatalf("%+v", qe)
	}
	qe = queryErr(t, e, "SELECT 1/0")
	if qe.SQLState != "22012" {
		t.Fatalf("%+v", qe)
	}
	// An error after some rows were sent: the rows are dropped.
	qe = queryErr(t, e, "SELECT 1/(5-g) FROM generate_series(1, 10) g")
	if qe.SQLState != "22012" {
		t.Fatalf("%+v", qe)
	}
	if !strings.Contains(qe.Error(), "SQLSTATE 22012") {
		t.Fatal(qe.Error())
	}
	if e.DestroyedConns() != 0 {
		t.Fatal("statement errors should not cost the connection")
	}
	assertPoolIdle(t, e.pool)
}

func TestValidatorRefusal(t *testing.T) {
	pool := newPool(t, 1, true)
	e, err := New(pool, refuseMarker{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(testCtx(t), "SELECT 'REFUSE'", nil, nil)
	if err != errRefused {
		t.Fatalf("the validator's error must come back unchanged, got %v", err)
	}
	if res.Timing.Pool != 0 || res.Timing.DB != 0 || res.Timing.Parse <= 0 {
		t.Fatalf("a refused statement must not reach the pool: %+v", res.Timing)
	}
	if _, err := e.Run(testCtx(t), "SELECT 1\x00; DELETE FROM x", nil, nil); err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Fatalf("NUL byte: %v", err)
	}
}

func TestOptions(t *testing.T) {
	pool := newPool(t, 1, true)
	for _, o := range []Options{{MaxRows: -1}, {MaxBytes: 10}, {MaxValueBytes: -1}, {StatementTimeout: -1}, {StatementTimeout: 1000}} {
		if _, err := New(pool, allowAll{}, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	e := newExec(t, pool, Options{})
	if e.opts != (Options{MaxRows: 100, MaxBytes: 32768, MaxValueBytes: 1 << 20, StatementTimeout: 30e9, AcquireTimeout: 30e9}) {
		t.Fatalf("defaults %+v", e.opts)
	}
}

// TestZeroColumns checks results without columns: the messages after their
// rows must fit the per-row message bound.
func TestZeroColumns(t *testing.T) {
	e := newExec(t, newPool(t, 1, true), Options{})
	res := run(t, e, "SELECT FROM generate_series(1, 2)")
	want := `{"columns":[],"rows":[[],[]],"row_count":2,"truncated":false}`
	if string(res.JSON) != want {
		t.Fatalf("got  %s\nwant %s", res.JSON, want)
	}
}

// TestCapStopKeepsConnection checks that a result cut by the row or the
// byte cap stops the statement on the server (a cancel after the last row
// needed) rather than reading a huge result to its end, and that the
// connection is reused afterwards. (A set-returning function in the
// select list streams; one in FROM is materialized before the first row.)
func TestCapStopKeepsConnection(t *testing.T) {
	pool := newPool(t, 1, true)
	for _, opts := range []Options{{MaxRows: 10}, {MaxBytes: 4096}} {
		e := newExec(t, pool, Options{MaxRows: opts.MaxRows, MaxBytes: opts.MaxBytes, StatementTimeout: 60 * time.Second})
		t0 := time.Now()
		res := run(t, e, "SELECT generate_series(1, 10000000000) AS g, repeat('x', 100) AS pad")
		if d := time.Since(t0); d > 5*time.Second {
			t.Errorf("%+v: a truncated result took %v; the statement was not stopped", opts, d)
		}
		if !res.Truncated || res.Rows == 0 || res.Command != "" {
			t.Errorf("%+v: %d rows, truncated %v by %q, command %q", opts, res.Rows, res.Truncated, res.TruncatedBy, res.Command)
		}
		if n := e.DestroyedConns(); n != 0 {
			t.Errorf("%+v: %d connections destroyed; a stopped statement keeps its connection", opts, n)
		}
		if res := run(t, e, "SELECT 1"); res.Rows != 1 || res.Truncated {
			t.Errorf("%+v: the next call on the connection: %+v", opts, res)
		}
	}
	assertPoolIdle(t, pool)
}

// TestParallelPlansAllowed checks that the executor does not keep
// PostgreSQL from running a statement with parallel workers (as a row
// limit on Execute would): with force_parallel_mode a parallel-safe
// function runs in a worker, whose process id differs from the session's.
func TestParallelPlansAllowed(t *testing.T) {
	a := admin(t)
	ctx := testCtx(t)
	for _, q := range []string{
		"DROP DATABASE IF EXISTS parallel_test",
		"CREATE DATABASE parallel_test",
		"ALTER DATABASE parallel_test SET force_parallel_mode = on",
	} {
		if _, err := a.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	url := pgtest.Shared(t).DBURL("parallel_test")
	setup, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer setup.Close(ctx)
	if _, err := setup.Exec(ctx, `CREATE FUNCTION worker_pid() RETURNS int LANGUAGE plpgsql PARALLEL SAFE
		AS $$ BEGIN RETURN pg_backend_pid(); END $$`); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	e := newExec(t, pool, Options{})
	leader := run(t, e, "SELECT pg_backend_pid()")
	worker := run(t, e, "SELECT worker_pid()")
	rows := func(doc []byte) string { return string(doc[bytes.Index(doc, []byte(`"rows"`)):]) }
	if rows(leader.JSON) == rows(worker.JSON) {
		t.Errorf("worker_pid() ran in the session's own process (%s): no parallel worker was used", rows(worker.JSON))
	}
}

// TestColumnsReused: a statement run again gets the same columns (the
// slice is reused), another statement gets its own, and the earlier
// result's columns stay as they were.
func TestColumnsReused(t *testing.T) {
	e := newExec(t, newPool(t, 1, true), Options{})
	a := run(t, e, "SELECT 1 AS a, 'x'::text AS b")
	b := run(t, e, "SELECT 2 AS a, 'y'::text AS b")
	c := run(t, e, "SELECT 2 AS a, 'y'::varchar AS b")
	d := run(t, e, "SELECT 3 AS z")
	wantAB := []Column{{Name: "a", Type: "int4", OID: 23}, {Name: "b", Type: "text", OID: 25}}
	for name, got := range map[string][]Column{"a": a.Columns, "b": b.Columns} {
		if !slices.Equal(got, wantAB) {
			t.Errorf("%s: columns %+v, want %+v", name, got, wantAB)
		}
	}
	if want := []Column{{Name: "a", Type: "int4", OID: 23}, {Name: "b", Type: "varchar", OID: 1043}}; !slices.Equal(c.Columns, want) {
		t.Errorf("c: columns %+v, want %+v", c.Columns, want)
	}
	if want := []Column{{Name: "z", Type: "int4", OID: 23}}; !slices.Equal(d.Columns, want) {
		t.Errorf("d: columns %+v, want %+v", d.Columns, want)
	}
	if !slices.Equal(a.Columns, wantAB) {
		t.Errorf("a's columns changed to %+v", a.Columns)
	}
}
