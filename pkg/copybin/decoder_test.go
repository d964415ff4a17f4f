package copybin

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// pgConn connects to the shared cluster and runs setup statements.
func pgConn(t testing.TB, setup ...string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.Shared(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	for _, s := range setup {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return conn
}

func copyBinary(t testing.TB, conn *pgx.Conn, query string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := conn.PgConn().CopyTo(context.Background(), &buf, "COPY ("+query+") TO STDOUT (FORMAT binary)"); err != nil {
		t.Fatalf("copy %s: %v", query, err)
	}
	return buf.Bytes()
}

// decodeAll decodes a whole stream in batches of max rows.
func decodeAll(r io.Reader, cols []Column, max int, fn func(*Batch)) (int64, error) {
	d, err := NewDecoder(r, cols)
	if err != nil {
		return 0, err
	}
	var b Batch
	for {
		_, err := d.Next(&b, max)
		if err == io.EOF {
			return d.Rows(), nil
		}
		if err != nil {
			return d.Rows(), err
		}
		fn(&b)
	}
}

// decimalText renders a scaled integer the way PostgreSQL renders numeric.
func decimalText(v *Vector, i int) string {
	n := new(big.Int).SetInt64(v.Int[i])
	if v.Precision > 18 {
		n.SetUint64(uint64(v.Int[i]))
		n.Add(n, new(big.Int).Lsh(big.NewInt(v.Hi[i]), 64))
	}
	s := new(big.Int).Abs(n).String()
	for len(s) <= v.Scale {
		s = "0" + s
	}
	if v.Scale > 0 {
		s = s[:len(s)-v.Scale] + "." + s[len(s)-v.Scale:]
	}
	if n.Sign() < 0 {
		s = "-" + s
	}
	return s
}

// TestNumericMatchesPostgres decodes many numerics of several shapes and
// compares each with PostgreSQL's own text rendering.
func TestNumericMatchesPostgres(t *testing.T) {
	conn := pgConn(t, `DROP TABLE IF EXISTS nums`, `CREATE TABLE nums (id int, a numeric(15,2), b numeric(38,10), c numeric(4,4), d numeric(5,-2), e numeric(20,0), f numeric(18,0), g numeric(3,5))`,
		`INSERT INTO nums SELECT g, ((random()-0.5)*2e13)::numeric(15,2), ((random()-0.5)*10^(random()*28))::numeric(38,10),
		   (random()-0.5)::numeric(4,4), ((random()-0.5)*9e6)::numeric(5,-2), ((random()-0.5)*10^(random()*20))::numeric(20,0),
		   ((random()-0.5)*10^(random()*18))::numeric(18,0), ((random()-0.5)/1000)::numeric(3,5)
		 FROM generate_series(1, 3000) g`,
		`INSERT INTO nums VALUES (-1, -9999999999999.99, '-9999999999999999999999999999.9999999999', -0.9999, 9999900, 99999999999999999999, 999999999999999999, 0.00999),
		   (-2, 0, '0.0000000001', 0.0001, -100, -99999999999999999999, -999999999999999999, -0.00001),
		   (-3, 0.01, '9999999999999999999999999999.9999999999', 0, 0, 0, 0, 0),
		   (-4, NULL, 1.5, NULL, NULL, NULL, NULL, NULL)`)
	cols, err := LookupColumns(context.Background(), conn, "nums")
	if err != nil {
		t.Fatal(err)
	}
	q := "SELECT * FROM nums ORDER BY id"
	rows, err := conn.Query(context.Background(), "SELECT a::text, b::text, c::text, d::text, e::text, f::text, g::text FROM nums ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	var want [][]*string
	for rows.Next() {
		r := make([]*string, 7)
		ptrs := make([]any, 7)
		for i := range r {
			ptrs[i] = &r[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		want = append(want, r)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	row := 0
	n, err := decodeAll(bytes.NewReader(copyBinary(t, conn, q)), cols, 1000, func(b *Batch) {
		for i := 0; i < b.Len; i++ {
			for c := 1; c < len(cols); c++ {
				w := want[row][c-1]
				v := &b.Cols[c]
				if v.Nulls[i] != (w == nil) {
					t.Fatalf("row %d col %s: null %v, want %v", row, cols[c].Name, v.Nulls[i], w == nil)
				}
				if w == nil {
					continue
				}
				// numeric(5,-2) and numeric(3,5) render at the DuckDB scale;
				// compare the values, not the digits after the point.
				got := decimalText(v, i)
				gr, _ := new(big.Rat).SetString(got)
				wr, _ := new(big.Rat).SetString(*w)
				if gr.Cmp(wr) != 0 || (c <= 3 && got != *w) {
					t.Fatalf("row %d col %s: got %s, want %s", row, cols[c].Name, got, *w)
				}
			}
			row++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if int(n) != len(want) || row != len(want) {
		t.Fatalf("decoded %d rows, want %d", n, len(want))
	}
}

// TestDecodeErrors checks that unrepresentable values name their place.
func TestDecodeErrors(t *testing.T) {
	conn := pgConn(t)
	cases := []struct {
		query, typ string
		typmod     int32
		want       string
	}{
		{"SELECT x FROM (VALUES (1.5::numeric(10,2)), ('NaN')) v(x)", "numeric", 10<<16 | 2 + 4, "column x, row 1"},
		{"SELECT 'Infinity'::numeric AS x", "numeric", 10<<16 | 2 + 4, "Infinity"},
		{"SELECT '294270-01-01'::timestamp AS x", "timestamp", -1, "outside DuckDB's range"},
		{"SELECT '{{1,2},{3,4}}'::int4[] AS x", "int4[]", -1, "2-dimensional"},
		{"SELECT '[0:1]={1,2}'::int4[] AS x", "int4[]", -1, "lower bound 0"},
	}
	oids := map[string]uint32{"numeric": pgtype.NumericOID, "timestamp": pgtype.TimestampOID, "int4[]": 1007}
	for _, c := range cases {
		cols := []Column{{Name: "x", TypeOID: oids[c.typ], TypMod: c.typmod, Type: c.typ}}
		d, err := NewDecoder(bytes.NewReader(copyBinary(t, conn, c.query)), cols)
		if err != nil {
			t.Fatal(err)
		}
		d.Table = "public.t"
		var b Batch
		_, err = d.Next(&b, 10)
		var de *DecodeError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "table public.t, column x") {
			t.Errorf("%s: error %v, want a DecodeError containing %q", c.query, err, c.want)
		}
	}
}

// TestRefusedTypes checks that types without an exact DuckDB type are
// refused up front with the column's name, and that AsText is the way out:
// unconstrained and too wide numerics, composites and their arrays, and
// types the decoder does not know (regclass's text needs the catalog).
func TestRefusedTypes(t *testing.T) {
	conn := pgConn(t, `DROP TABLE IF EXISTS odd`, `DROP TYPE IF EXISTS odd_pair`,
		`CREATE TYPE odd_pair AS (a int, b text)`,
		`CREATE TABLE odd (ok int, "Free" numeric, wide numeric(40,2), pair odd_pair, pairs odd_pair[], rel regclass)`,
		`INSERT INTO odd VALUES (1, 1.50, 2, '(1,x)', '{"(2,y)"}', 'pg_class')`)
	cols, err := LookupColumns(context.Background(), conn, "odd")
	if err != nil {
		t.Fatal(err)
	}
	var exprs []string
	for i := range cols {
		c := &cols[i]
		if i > 0 {
			_, err := DuckDBType(*c)
			if err == nil || !strings.Contains(err.Error(), QuoteIdent(c.Name)) {
				t.Errorf("DuckDBType(%s %s): error %v, want one naming the column", c.Name, c.Type, err)
			}
			if _, err := NewDecoder(nil, []Column{*c}); err == nil {
				t.Errorf("NewDecoder accepted %s %s", c.Name, c.Type)
			}
			c.AsText = true
			if typ, err := DuckDBType(*c); err != nil || typ != "VARCHAR" {
				t.Errorf("AsText %s: %q, %v", c.Name, typ, err)
			}
		}
		exprs = append(exprs, c.SelectExpr())
	}
	var got []string
	_, err = decodeAll(bytes.NewReader(copyBinary(t, conn, "SELECT "+strings.Join(exprs, ", ")+" FROM odd")), cols, 10, func(b *Batch) {
		for c := range b.Cols {
			got = append(got, renderValue(&b.Cols[c], 0))
		}
	})
	if want := `1|1.50|2.00|(1,x)|{"(2,y)"}|pg_class`; err != nil || strings.Join(got, "|") != want {
		t.Errorf("read as text: %q, %v; want %s", got, err, want)
	}
}

// TestTruncatedAndGarbage cuts a real stream at every length and flips bytes:
// the decoder must return errors, never panic or loop.
func TestTruncatedAndGarbage(t *testing.T) {
	conn := pgConn(t)
	data := copyBinary(t, conn, "SELECT 1::int4 AS a, 'hello'::text AS b, 12.5::numeric(6,2) AS c, '{1,NULL}'::int4[] AS d FROM generate_series(1,3)")
	cols := []Column{{Name: "a", TypeOID: pgtype.Int4OID}, {Name: "b", TypeOID: pgtype.TextOID}, {Name: "c", TypeOID: pgtype.NumericOID, TypMod: 6<<16 | 2 + 4}, {Name: "d", TypeOID: 1007}}
	if n, err := decodeAll(bytes.NewReader(data), cols, 2, func(*Batch) {}); err != nil || n != 3 {
		t.Fatalf("whole stream: %d rows, %v", n, err)
	}
	for cut := 0; cut < len(data); cut++ {
		_, err := decodeAll(bytes.NewReader(data[:cut]), cols, 2, func(*Batch) {})
		if err == nil {
			t.Fatalf("stream cut at %d of %d decoded without error", cut, len(data))
		}
	}
	_, err := decodeAll(bytes.NewReader(data[:40]), cols, 2, func(*Batch) {})
	if !strings.Contains(err.Error(), "byte ") {
		t.Errorf("truncation error %q does not give the byte offset", err)
	}
	for i := range data {
		bad := bytes.Clone(data)
		bad[i] ^= 0x55
		decodeAll(bytes.NewReader(bad), cols, 2, func(*Batch) {}) // must not panic
	}
}

// fuzzCols are FuzzDecoder's columns: the hand path's commonest shapes,
// then types decoded through pgtype or rare.go's own decoders.
var fuzzCols = []Column{{Name: "a", TypeOID: pgtype.Int8OID}, {Name: "b", TypeOID: pgtype.BPCharOID}, {Name: "c", TypeOID: pgtype.NumericOID, TypMod: 20<<16 | 4 + 4},
	{Name: "d", TypeOID: 1009}, {Name: "e", TypeOID: pgtype.JSONBOID}, {Name: "f", TypeOID: pgtype.TimestamptzOID}, {Name: "g", TypeOID: pgtype.DateOID},
	{Name: "ip", TypeOID: pgtype.InetOID}, {Name: "net", TypeOID: pgtype.CIDROID}, {Name: "mac", TypeOID: pgtype.MacaddrOID},
	{Name: "pt", TypeOID: pgtype.PointOID}, {Name: "pa", TypeOID: pgtype.PathOID}, {Name: "pg", TypeOID: pgtype.PolygonOID},
	{Name: "vb", TypeOID: pgtype.VarbitOID}, {Name: "nr", TypeOID: pgtype.NumrangeOID}, {Name: "tzr", TypeOID: pgtype.TstzrangeOID},
	{Name: "i4m", TypeOID: pgtype.Int4multirangeOID}, {Name: "tv", TypeOID: pgtype.TSVectorOID}, {Name: "tq", TypeOID: tsqueryOID},
	{Name: "mo", TypeOID: moneyOID, TypMod: 19<<16 | 2 + 4}, {Name: "tt", TypeOID: pgtype.TimetzOID}, {Name: "x8", TypeOID: pgtype.XID8OID},
	{Name: "aip", TypeOID: 1041}, {Name: "ls", TypeOID: pgLSNOID}, {Name: "ti", TypeOID: pgtype.TIDOID}}

func FuzzDecoder(f *testing.F) {
	f.Add(append(append(bytes.Clone(signature), 0, 0, 0, 0, 0, 0, 0, 0), 0xff, 0xff))
	f.Add(fuzzSeed())
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := NewDecoder(bytes.NewReader(data), fuzzCols)
		if err != nil {
			t.Fatal(err)
		}
		var b Batch
		for range 100 {
			n, err := d.Next(&b, 3)
			if err != nil {
				return
			}
			for _, v := range b.Cols {
				if v.Len() != n || len(v.Nulls) != n {
					t.Fatalf("vector has %d values, batch %d", v.Len(), n)
				}
			}
		}
	})
}

// TestFuzzSeedDecodes checks that FuzzDecoder's seed is a valid stream, so
// the fuzzer starts from tuples that reach every decoder.
func TestFuzzSeedDecodes(t *testing.T) {
	var got []string
	_, err := decodeAll(bytes.NewReader(fuzzSeed()), fuzzCols, 10, func(b *Batch) {
		for c := range b.Cols {
			got = append(got, renderValue(&b.Cols[c], 0))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "42|ab|12.5000|x\x1fNULL|{}|946684800000001|2147483647|192.168.0.1/24|2001:db8::/64|08:00:2b:01:02:03|(1.5,-2)|((0,0),(1,1))|((0,0))|101|[1.5,2.25]|[\"2000-01-01 00:00:00+00\",)|{[1,3),(5,)}|'a':3B 'cat'|'a':* & 'b'|-12.34|45296789000 -19800|18446744073709551615|10.0.0.1\x1fNULL|16/B374D848|(7,3)"
	if s := strings.Join(got, "|"); s != want {
		t.Errorf("seed decodes as\n%s\nwant\n%s", s, want)
	}
}

// fuzzSeed is one hand-built valid tuple of FuzzDecoder's columns.
func fuzzSeed() []byte {
	var w bytes.Buffer
	w.Write(signature)
	w.Write([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	be := binary.BigEndian
	u16 := func(b []byte, x uint16) []byte { return be.AppendUint16(b, x) }
	u32 := func(b []byte, x uint32) []byte { return be.AppendUint32(b, x) }
	u64 := func(b []byte, x uint64) []byte { return be.AppendUint64(b, x) }
	f64 := func(b []byte, x ...float64) []byte {
		for _, v := range x {
			b = u64(b, math.Float64bits(v))
		}
		return b
	}
	lenPrefixed := func(b []byte, v []byte) []byte { return append(u32(b, uint32(len(v))), v...) }
	field := func(b ...byte) {
		w.Write(lenPrefixed(nil, b))
	}
	w.Write(u16(nil, uint16(len(fuzzCols))))
	field(0, 0, 0, 0, 0, 0, 0, 42)
	field('a', 'b', ' ', ' ')
	field(0, 2, 0, 0, 0, 0, 0, 4, 0, 12, 0x13, 0x88) // 12.5
	field(0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 25, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 'x', 0xff, 0xff, 0xff, 0xff)
	field(1, '{', '}')
	field(0, 0, 0, 0, 0, 0, 0, 1)
	field(0x7f, 0xff, 0xff, 0xff)
	inet4 := []byte{2, 24, 0, 4, 192, 168, 0, 1}
	field(inet4...)
	field(append([]byte{3, 64, 1, 16, 0x20, 0x01, 0x0d, 0xb8}, make([]byte, 12)...)...)
	field(8, 0, 0x2b, 1, 2, 3)
	field(f64(nil, 1.5, -2)...)
	field(f64(u32([]byte{1}, 2), 0, 0, 1, 1)...) // closed path
	field(f64(u32(nil, 1), 0, 0)...)
	field(append(u32(nil, 3), 0xa0)...)
	num15 := []byte{0, 2, 0, 0, 0, 0, 0, 1, 0, 1, 0x13, 0x88}  // 1.5
	num225 := []byte{0, 2, 0, 0, 0, 0, 0, 2, 0, 2, 0x09, 0xc4} // 2.25
	field(lenPrefixed(lenPrefixed([]byte{0x06}, num15), num225)...)
	field(lenPrefixed([]byte{0x12}, make([]byte, 8))...)
	r13 := lenPrefixed(lenPrefixed([]byte{0x02}, u32(nil, 1)), u32(nil, 3))
	r5 := lenPrefixed([]byte{0x10}, u32(nil, 5))
	field(lenPrefixed(lenPrefixed(u32(nil, 2), r13), r5)...)
	field(append(u16(append(u32(nil, 2), 'a', 0), 1), 0x80, 3, 'c', 'a', 't', 0, 0, 0)...)
	field(append(u32(nil, 3), 2, 2, 1, 0, 0, 'b', 0, 1, 0, 1, 'a', 0)...)
	field(u64(nil, uint64(0xffff_ffff_ffff_fb2e))...) // -12.34
	field(u32(u64(nil, 45296789000), 19800)...)       // 12:34:56.789-05:30
	field(u64(nil, math.MaxUint64)...)
	arr := u32(u32(u32(u32(u32(nil, 1), 0), 869), 2), 1)
	field(u32(lenPrefixed(arr, []byte{2, 32, 0, 4, 10, 0, 0, 1}), 0xffffffff)...)
	field(u64(nil, 0x16_B374D848)...)
	field(u16(u32(nil, 7), 3)...)
	w.Write([]byte{0xff, 0xff})
	return w.Bytes()
}

// TestInvalidUTF8 reads text from a SQL_ASCII database, where any bytes are
// allowed, and checks that a non-UTF-8 value is refused with its row.
func TestInvalidUTF8(t *testing.T) {
	ctx := context.Background()
	admin := pgConn(t, `DROP DATABASE IF EXISTS ascii`, `CREATE DATABASE ascii TEMPLATE template0 ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C'`)
	_ = admin
	conn, err := pgx.Connect(ctx, pgtest.Shared(t).DBURL("ascii"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{
		`SELECT convert_from('\x68c3a9'::bytea, 'SQL_ASCII') AS s, ARRAY['ok'] AS a UNION ALL SELECT 'plain', ARRAY['fine', convert_from('\x61ff'::bytea, 'SQL_ASCII')]`,
		`SELECT 'ok' AS s, ARRAY['fine'] AS a UNION ALL SELECT convert_from('\xc3'::bytea, 'SQL_ASCII'), ARRAY['x']`,
	} {
		cols := []Column{{Name: "s", TypeOID: pgtype.TextOID}, {Name: "a", TypeOID: 1009}}
		_, err := decodeAll(bytes.NewReader(copyBinary(t, conn, q)), cols, 10, func(*Batch) {})
		var de *DecodeError
		if !errors.As(err, &de) || de.Row != 1 || !strings.Contains(err.Error(), "not valid UTF-8") {
			t.Errorf("%s: error %v, want a UTF-8 error at row 1", q, err)
		}
	}
}

// TestLookupDomainsAndEnums checks that a domain is read as its base type
// and an enum as its label.
func TestLookupDomainsAndEnums(t *testing.T) {
	conn := pgConn(t, `DROP TABLE IF EXISTS de`, `DROP DOMAIN IF EXISTS money2`, `DROP TYPE IF EXISTS mood`,
		`CREATE DOMAIN money2 AS numeric(10,2) CHECK (VALUE >= 0)`, `CREATE TYPE mood AS ENUM ('sad', 'happy')`,
		`CREATE TABLE de (m money2, f mood NOT NULL)`, `INSERT INTO de VALUES (12.5, 'happy'), (NULL, 'sad')`)
	cols, err := LookupColumns(context.Background(), conn, "de")
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, c := range cols {
		typ, err := DuckDBType(c)
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, typ)
	}
	if got := strings.Join(types, ","); got != "DECIMAL(10,2),VARCHAR" || !cols[1].NotNull || cols[0].Type != "money2" {
		t.Fatalf("types %s, columns %+v", got, cols)
	}
	var got []string
	_, err = decodeAll(bytes.NewReader(copyBinary(t, conn, "SELECT m, f FROM de ORDER BY f")), cols, 10, func(b *Batch) {
		for i := 0; i < b.Len; i++ {
			m := "NULL"
			if !b.Cols[0].Nulls[i] {
				m = decimalText(&b.Cols[0], i)
			}
			got = append(got, m+" "+string(b.Cols[1].Bytes(i)))
		}
	})
	if err != nil || strings.Join(got, ";") != "NULL sad;12.50 happy" {
		t.Fatalf("decoded %q, %v", got, err)
	}
}
