package duckload

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/copybin"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// allTypesDDL is a PostgreSQL table with every supported type.
const allTypesDDL = `CREATE TABLE alltypes (
 id int4 PRIMARY KEY, b bool, i2 int2, i4 int4, i8 int8 NOT NULL, f4 float4, f8 float8,
 n15 numeric(15,2), n38 numeric(38,10), n4 numeric(4,4), nneg numeric(5,-2), n20 numeric(20,0),
 t text, vc varchar(20), c5 char(5), nm name, ch "char", o oid,
 d date, ts timestamp, tstz timestamptz, tm time, iv interval,
 u uuid, by bytea, js json, jb jsonb,
 ai int4[], ai8 int8[], at text[], an numeric(12,3)[], ab bool[], ad date[], af float8[])`

// allTypesRows: typical values, all NULLs, extremes at both ends, unicode,
// zero bytes, arrays with NULL elements, then enough generated rows to cross
// several DuckDB chunks (2048 rows) with NULLs in between.
var allTypesRows = []string{
	`INSERT INTO alltypes VALUES
 (1, true, 12, 1234, 123456789012, 1.5, 2.25, 1234.56, 1.5, 0.5, 1200, 12345678901234567890,
  'hello', 'world', 'ab', 'pg_class', 'x', 42, '2024-02-29', '2024-02-29 12:34:56.789012', '2024-02-29 12:34:56.789012+02', '12:34:56.789012', '1 year 2 months 3 days 04:05:06.789',
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\x00ff00', '{"a": [1, 2.50, "x"]}', '{"b": 1, "a": [true, null]}',
  '{1,2,3}', '{9223372036854775807}', '{"a","b c"}', '{1.5,-2.125}', '{t,f}', '{2024-01-01}', '{1.5,NaN}')`,
	`INSERT INTO alltypes (id, i8) VALUES (2, 0)`,
	`INSERT INTO alltypes VALUES
 (3, false, -32768, -2147483648, -9223372036854775808, 'NaN', '-Infinity',
  -9999999999999.99, '-9999999999999999999999999999.9999999999', -0.9999, 9999900, 99999999999999999999,
  '', '', '', '', ' ', 0, 'infinity', '-infinity', 'infinity', '00:00:00', '-1 year -2 days -00:00:00.000001',
  '00000000-0000-0000-0000-000000000000', '\x', '[]', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}')`,
	`INSERT INTO alltypes VALUES
 (4, NULL, 32767, 2147483647, 9223372036854775807, '-0', 1e308,
  0.01, '9999999999999999999999999999.9999999999', 0.0001, -100, -99999999999999999999,
  'héllo wörld ✓ 𝄞 — long enough not to be inlined', 'ünïcödé', 'ab   ', 'n', 'é', 4294967295,
  '4713-01-01 BC', '1900-01-01 00:00:00.000001', '1969-12-31 23:59:59.999999+00', '23:59:59.999999', '178000000 years',
  'ffffffff-ffff-ffff-ffff-ffffffffffff', '\x000000000000000000000000000000000000', '"a\u0000b"', '[1, "x", {"k": null}]',
  '{NULL,1,NULL}', '{NULL}', '{NULL,"long string, more than twelve bytes",""}', '{NULL,0.001,-999999999.999}', '{NULL,true}', '{NULL,1999-12-31}', '{Infinity,-0,NULL}')`,
	`INSERT INTO alltypes VALUES
 (5, true, 0, 0, 1, 1e-45, 5e-324, -0.01, '0.0000000001', -0.0001, 0, 1,
  repeat('x', 100000), repeat('y', 20), 'abcde', repeat('n', 63), 'a', 1,
  '0001-01-01', '294246-12-31 23:59:59.999999', '4713-01-01 00:00:00+00 BC', '00:00:00.000001', '-178000000 years',
  '80000000-0000-0000-0000-000000000000', decode(repeat('00', 1000), 'hex'), '1.0e10', '1.0e10',
  '{}', '{-9223372036854775808}', '{""}', '{0}', '{}', '{infinity,-infinity}', '{}')`,
	`INSERT INTO alltypes SELECT g, g % 2 = 0, (g % 30000)::int2, g * 1000, g::int8 * 1000000007, g / 7.0, g / 3.0,
  (g * 12.34)::numeric(15,2), (g::numeric * 1234567.1234567)::numeric(38,10), ((g % 9999) / 10000.0)::numeric(4,4), (g * 100 % 99999)::numeric(5,-2), g::numeric * 99999999999,
  'row ' || g || repeat('-', g % 40), 'v' || g, chr(65 + g % 26), 'n' || g, chr(97 + g % 26), g,
  date '2000-01-01' + g, timestamp '1999-12-31 00:00:00' + g * interval '1 hour 1 microsecond', timestamptz '2020-06-01 00:00:00+00' - g * interval '1 minute', (g * interval '1 second')::time, g * interval '1 day 1 second',
  md5(g::text)::uuid, decode(md5(g::text), 'hex'), json_build_object('g', g), jsonb_build_object('g', g, 's', repeat('z', g % 20)),
  array[g, NULL, g + 1], array[g::int8], array['e' || g, repeat('w', g % 30)], array[(g / 8.0)::numeric(12,3)], array[g % 3 = 0], array[date '2020-01-01' + g], array[g / 9.0]
 FROM generate_series(10, 6009) g`,
	`UPDATE alltypes SET b = NULL, i2 = NULL, f4 = NULL, n38 = NULL, t = NULL, c5 = NULL, d = NULL, tstz = NULL, iv = NULL, u = NULL, by = NULL, jb = NULL, ai = NULL, an = NULL WHERE id >= 10 AND id % 7 = 0`,
	`UPDATE alltypes SET i4 = NULL, n15 = NULL, vc = NULL, ts = NULL, tm = NULL, js = NULL, at = NULL, ad = NULL, af = NULL WHERE id >= 10 AND id % 11 = 3`,
}

// canon gives, per column, an expression each engine renders to the same
// text for equal values: numbers of days or microseconds since the epoch for
// dates and timestamps (their text forms differ between the engines), the
// interval's three fields, hex for bytes, the element texts for lists.
type canon struct{ pg, duck string }

func canonFor(name, typ string) canon {
	q := copybin.QuoteIdent(name)
	switch typ {
	case "date":
		return canon{
			fmt.Sprintf("CASE WHEN isfinite(%s) THEN (%[1]s - date '1970-01-01')::text ELSE %[1]s::text END", q),
			fmt.Sprintf("CASE WHEN isfinite(%s) THEN (%[1]s - DATE '1970-01-01')::VARCHAR ELSE %[1]s::VARCHAR END", q)}
	case "timestamp without time zone", "timestamp with time zone":
		return canon{
			fmt.Sprintf("CASE WHEN isfinite(%s) THEN (extract(epoch from %[1]s) * 1000000)::numeric(30,0)::text ELSE %[1]s::text END", q),
			fmt.Sprintf("CASE WHEN isfinite(%s) THEN epoch_us(%[1]s)::VARCHAR ELSE %[1]s::VARCHAR END", q)}
	case "interval":
		return canon{
			fmt.Sprintf("(extract(year from %s) * 12 + extract(month from %[1]s))::text || ' ' || extract(day from %[1]s)::text || ' ' || (extract(hour from %[1]s) * 3600000000 + extract(minute from %[1]s) * 60000000 + extract(microseconds from %[1]s))::text", q),
			fmt.Sprintf("(datepart('year', %s) * 12 + datepart('month', %[1]s))::VARCHAR || ' ' || datepart('day', %[1]s)::VARCHAR || ' ' || (datepart('hour', %[1]s)::BIGINT * 3600000000 + datepart('minute', %[1]s) * 60000000 + datepart('microseconds', %[1]s))::VARCHAR", q)}
	case "bytea":
		return canon{fmt.Sprintf("encode(%s, 'hex')", q), fmt.Sprintf("lower(hex(%s))", q)}
	case "real", "double precision":
		return canon{q + "::float8", q + "::DOUBLE"}
	case "date[]":
		return canon{
			fmt.Sprintf("CASE WHEN %s IS NOT NULL THEN array_to_string(array(SELECT coalesce(CASE WHEN isfinite(x) THEN (x - date '1970-01-01')::text ELSE x::text END, 'NULL') FROM unnest(%[1]s) x), '|') END", q),
			fmt.Sprintf("array_to_string(list_transform(%s, x -> coalesce(CASE WHEN isfinite(x) THEN (x - DATE '1970-01-01')::VARCHAR ELSE x::VARCHAR END, 'NULL')), '|')", q)}
	case "double precision[]":
		return canon{
			fmt.Sprintf("CASE WHEN %s IS NOT NULL THEN array_to_string(array(SELECT coalesce(x::text, 'NULL') FROM unnest(%[1]s) x), '|') END", q),
			fmt.Sprintf("array_to_string(list_transform(%s, x -> coalesce(CASE WHEN x = 0 AND signbit(x) THEN '-0' WHEN isinf(x) AND x > 0 THEN 'Infinity' WHEN isinf(x) THEN '-Infinity' WHEN isnan(x) THEN 'NaN' ELSE regexp_replace(x::VARCHAR, '\\.0$', '') END, 'NULL')), '|')", q)}
	}
	if strings.HasPrefix(typ, "numeric(") {
		// DuckDB prints DECIMAL(4,4) 0.5 as .5000
		pg := fmt.Sprintf("CASE WHEN %s IS NOT NULL THEN array_to_string(array(SELECT coalesce(x::text, 'NULL') FROM unnest(%[1]s) x), '|') END", q)
		duck := fmt.Sprintf("array_to_string(list_transform(%s, x -> coalesce(regexp_replace(x::VARCHAR, '^(-?)\\.', '\\10.'), 'NULL')), '|')", q)
		if !strings.HasSuffix(typ, "[]") {
			pg, duck = q+"::text", fmt.Sprintf("regexp_replace(%s::VARCHAR, '^(-?)\\.', '\\10.')", q)
		}
		return canon{pg, duck}
	}
	if strings.HasSuffix(typ, "[]") {
		return canon{
			fmt.Sprintf("CASE WHEN %s IS NOT NULL THEN array_to_string(array(SELECT coalesce(x::text, 'NULL') FROM unnest(%[1]s) x), '|') END", q),
			fmt.Sprintf("array_to_string(list_transform(%s, x -> coalesce(x::VARCHAR, 'NULL')), '|')", q)}
	}
	return canon{q + "::text", q + "::VARCHAR"}
}

// renderRows reads every row as strings ("NULL" for NULL), floats through
// strconv so that both engines' float text forms do not matter.
func renderRows(rows interface {
	Next() bool
	Scan(...any) error
	Err() error
}, floats map[int]bool, n int) ([][]string, error) {
	var out [][]string
	for rows.Next() {
		strs := make([]sql.NullString, n)
		fls := make([]sql.NullFloat64, n)
		ptrs := make([]any, n)
		for i := range ptrs {
			if floats[i] {
				ptrs[i] = &fls[i]
			} else {
				ptrs[i] = &strs[i]
			}
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		r := make([]string, n)
		for i := range r {
			switch {
			case floats[i] && fls[i].Valid:
				f := fls[i].Float64
				r[i] = strconv.FormatFloat(f, 'g', -1, 64)
				if f == 0 && math.Signbit(f) {
					r[i] = "-0"
				}
			case !floats[i] && strs[i].Valid:
				r[i] = strs[i].String
			default:
				r[i] = "NULL"
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

type pgSource struct {
	conn   *pgx.Conn
	cols   []copybin.Column
	data   []byte // the COPY BINARY stream
	want   [][]string
	exprs  []canon
	floats map[int]bool
}

// loadSource creates the PostgreSQL table, captures its COPY BINARY stream
// and PostgreSQL's canonical rendering of every row.
func loadSource(t *testing.T) *pgSource {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.Shared(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	for _, s := range append([]string{"SET TimeZone = 'UTC'", "DROP TABLE IF EXISTS alltypes", allTypesDDL}, allTypesRows...) {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%.60s: %v", s, err)
		}
	}
	src := &pgSource{conn: conn, floats: map[int]bool{}}
	if src.cols, err = copybin.LookupColumns(ctx, conn, "alltypes"); err != nil {
		t.Fatal(err)
	}
	var sel []string
	for i, c := range src.cols {
		e := canonFor(c.Name, c.Type)
		src.exprs = append(src.exprs, e)
		sel = append(sel, e.pg)
		if c.Type == "real" || c.Type == "double precision" {
			src.floats[i] = true
		}
	}
	rows, err := conn.Query(ctx, "SELECT "+strings.Join(sel, ", ")+" FROM alltypes AS src ORDER BY src.id")
	if err != nil {
		t.Fatal(err)
	}
	if src.want, err = renderRows(rows, src.floats, len(sel)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := conn.PgConn().CopyTo(ctx, &buf, "COPY (SELECT * FROM alltypes ORDER BY id) TO STDOUT (FORMAT binary)"); err != nil {
		t.Fatal(err)
	}
	src.data = buf.Bytes()
	return src
}

// check compares DuckDB's table with PostgreSQL's, row by row, column by column.
func (src *pgSource) check(t *testing.T, db *sql.DB, table string) {
	t.Helper()
	var sel []string
	for _, e := range src.exprs {
		sel = append(sel, e.duck)
	}
	rows, err := db.Query("SELECT " + strings.Join(sel, ", ") + " FROM " + table + " AS src ORDER BY src.id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got, err := renderRows(rows, src.floats, len(sel))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(src.want) {
		t.Fatalf("%s: %d rows, PostgreSQL has %d", table, len(got), len(src.want))
	}
	bad := 0
	for r := range got {
		for c := range got[r] {
			if got[r][c] != src.want[r][c] {
				if bad++; bad <= 10 {
					t.Errorf("%s row id=%s column %s (%s): DuckDB %.80q, PostgreSQL %.80q", table, src.want[r][0], src.cols[c].Name, src.cols[c].Type, got[r][c], src.want[r][c])
				}
			}
		}
	}
}

func openDuck(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(8)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec("SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
	return db
}

// appendAll decodes data and appends it through one AppenderSink on its own
// connection.
func appendAll(ctx context.Context, db *sql.DB, schema, table string, cols []copybin.Column, r io.Reader, max int) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var sink *AppenderSink
	if err := conn.Raw(func(dc any) error {
		sink, err = NewAppenderSink(dc.(driver.Conn), schema, table, cols)
		return err
	}); err != nil {
		return err
	}
	dec, err := copybin.NewDecoder(r, cols)
	if err != nil {
		sink.Close()
		return err
	}
	var b copybin.Batch
	for {
		_, err := dec.Next(&b, max)
		if err == io.EOF {
			return sink.Close()
		}
		if err == nil {
			err = sink.Write(&b)
		}
		if err != nil {
			sink.Close()
			return err
		}
	}
}

func TestAppenderRoundTrip(t *testing.T) {
	src := loadSource(t)
	ctx := context.Background()
	db := openDuck(t)
	if err := CreateTable(ctx, db, "pg", "alltypes", src.cols); err != nil {
		t.Fatal(err)
	}
	// 1000-row batches straddle DuckDB's 2048-row chunks.
	if err := appendAll(ctx, db, "pg", "alltypes", src.cols, bytes.NewReader(src.data), 1000); err != nil {
		t.Fatal(err)
	}
	src.check(t, db, "pg.alltypes")
}
