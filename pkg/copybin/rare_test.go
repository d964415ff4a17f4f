package copybin

import (
	"bytes"
	"context"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// rareSchema is copybintest's table with one column of each type off the
// hand path (read from its file: copybintest imports copybin).
func rareSchema(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("copybintest/rare.sql")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pgSession connects with TextSettings set, as snapshot's sessions are.
func pgSession(t *testing.T, setup ...string) *pgx.Conn {
	t.Helper()
	return pgConn(t, append([]string{TextSettings}, setup...)...)
}

// rareExpect is, per column of rare, the PostgreSQL expression whose text
// the decoded value must equal: the type's output function (format's %s),
// which for inet and cidr differs from ::text (that always adds /32).
func rareExpect(c Column) string {
	q := QuoteIdent(c.Name)
	kind, elem, _ := c.Kind()
	list := func(e string) string {
		return "CASE WHEN " + q + " IS NOT NULL THEN array_to_string(array(SELECT coalesce(" + e + ", 'NULL') FROM unnest(" + q + ") x), chr(31)) END"
	}
	switch {
	case kind == KindList && elem == KindDecimal:
		return list("x::numeric::text")
	case kind == KindList && elem == KindTimeTZ:
		return list(timetzParts("x"))
	case kind == KindList:
		return list("CASE WHEN x IS NOT NULL THEN format('%s', x) END")
	case kind == KindDecimal:
		return q + "::numeric::text"
	case kind == KindTimeTZ:
		return timetzParts(q)
	}
	return "CASE WHEN " + q + " IS NOT NULL THEN format('%s', " + q + ") END"
}

// timetzParts renders a timetz as "<local microseconds> <offset east>".
func timetzParts(x string) string {
	return "(extract(epoch from " + x + "::time) * 1000000)::bigint::text || ' ' || extract(timezone from " + x + ")::int::text"
}

// renderValue renders row i of a decoded vector like rareExpect.
func renderValue(v *Vector, i int) string {
	switch v.Kind {
	case KindList:
		var parts []string
		for j := v.ListOff[i]; j < v.ListOff[i+1]; j++ {
			if v.Elem.Nulls[j] {
				parts = append(parts, "NULL")
			} else {
				parts = append(parts, renderValue(v.Elem, j))
			}
		}
		return strings.Join(parts, "\x1f")
	case KindDecimal:
		return decimalText(v, i)
	case KindTimeTZ:
		return strconv.FormatInt(v.Int[i], 10) + " " + strconv.FormatInt(v.Hi[i], 10)
	case KindUint64:
		return strconv.FormatUint(uint64(v.Int[i]), 10)
	case KindInt64, KindInt32, KindInt16, KindDate, KindTime, KindTimestamp, KindTimestampTZ:
		return strconv.FormatInt(v.Int[i], 10)
	}
	return string(v.Bytes(i))
}

// TestRareTypesMatchPostgres decodes every type off the hand path and
// compares each value with PostgreSQL's own text of it.
func TestRareTypesMatchPostgres(t *testing.T) {
	ctx := context.Background()
	conn := pgSession(t, rareSchema(t))
	cols, err := LookupColumns(ctx, conn, "rare")
	if err != nil {
		t.Fatal(err)
	}
	var exprs []string
	for _, c := range cols {
		if _, err := DuckDBType(c); err != nil {
			t.Fatalf("column %s: %v", c.Name, err)
		}
		exprs = append(exprs, rareExpect(c))
	}
	rows, err := conn.Query(ctx, "SELECT "+strings.Join(exprs, ", ")+" FROM rare ORDER BY rare.id")
	if err != nil {
		t.Fatal(err)
	}
	var want [][]*string
	for rows.Next() {
		r := make([]*string, len(cols))
		ptrs := make([]any, len(cols))
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
	row, bad := 0, 0
	n, err := decodeAll(bytes.NewReader(copyBinary(t, conn, "SELECT * FROM rare ORDER BY id")), cols, 1000, func(b *Batch) {
		for i := 0; i < b.Len; i++ {
			for c := range cols {
				w, v := want[row][c], &b.Cols[c]
				got := "NULL"
				if !v.Nulls[i] {
					got = renderValue(v, i)
				}
				if w == nil && got != "NULL" || w != nil && got != *w {
					if bad++; bad <= 20 {
						t.Errorf("id %s column %s (%s): got %q, want %v", *want[row][0], cols[c].Name, cols[c].Type, got, strOrNil(w))
					}
				}
			}
			row++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if int(n) != len(want) {
		t.Fatalf("decoded %d rows, want %d", n, len(want))
	}
}

func strOrNil(s *string) string {
	if s == nil {
		return "NULL"
	}
	return strconv.Quote(*s)
}

// TestFloat8TextMatchesPostgres prints random doubles, round integers above
// 2^53 (where PostgreSQL's Ryu and Go's shortest can differ) and the
// special values, and compares each with float8out's text.
func TestFloat8TextMatchesPostgres(t *testing.T) {
	conn := pgSession(t)
	rng := rand.New(rand.NewPCG(1, 2))
	vals := []float64{0.1, 1e15, 1e14, 123456789012345, 1e-4, 1e-5, 5e-324, math.MaxFloat64, -math.SmallestNonzeroFloat64, 1 << 53, 1<<53 + 2, 1e16, 1e22, 1e23}
	for range 20000 {
		vals = append(vals, math.Float64frombits(rng.Uint64()))
	}
	for range 20000 {
		vals = append(vals, float64(rng.Uint64()>>rng.IntN(12))*math.Pow(10, float64(rng.IntN(30))))
	}
	var want []string
	if err := conn.QueryRow(context.Background(), "SELECT array_agg(x::text ORDER BY o) FROM unnest($1::float8[]) WITH ORDINALITY u(x, o)", vals).Scan(&want); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i, f := range vals {
		if got := string(appendFloat8(nil, f)); got != want[i] {
			if bad++; bad <= 10 {
				t.Errorf("%v (%#x): got %s, want %s", f, math.Float64bits(f), got, want[i])
			}
		}
	}
}

// BenchmarkDecodeRare decodes a 100,000-row single-column COPY BINARY
// stream per type: a few hand-decoded types for comparison, then types
// decoded per value through pgtype or rare.go. Run with -benchtime 5x.
func BenchmarkDecodeRare(b *testing.B) {
	cases := []struct{ name, expr, typ string }{
		{"int8", "g::int8", "int8"},
		{"text", "'row ' || g", "text"},
		{"numeric", "(g / 7.0)::numeric(12,2)", "numeric(12,2)"},
		{"inet", "('10.' || g % 256 || '.' || g / 256 % 256 || '.1')::inet", "inet"},
		{"inet6", "('2001:db8::' || to_hex(g % 65536))::inet", "inet"},
		{"macaddr", "('08:00:2b:01:' || lpad(to_hex(g % 256), 2, '0') || ':02')::macaddr", "macaddr"},
		{"point", "point(g / 7.0, -g / 3.0)", "point"},
		{"box", "box(point(g, g), point(-g / 3.0, 0))", "box"},
		{"bit", "(g % 65536)::bit(16)", "bit(16)"},
		{"int4range", "int4range(g, g + 10)", "int4range"},
		{"numrange", "numrange(g / 7.0, g)", "numrange"},
		{"tstzrange", "tstzrange(timestamptz '2020-01-01' + g * interval '1 minute', NULL)", "tstzrange"},
		{"int4multirange", "int4multirange(int4range(g, g + 1), int4range(g + 5, g + 9))", "int4multirange"},
		{"tsvector", "to_tsvector('simple', 'word' || g || ' other text')", "tsvector"},
		{"tsquery", "('w' || g || ' & !x')::tsquery", "tsquery"},
		{"money", "(g * 1.25)::numeric::money", "money"},
		{"timetz", "(time '00:00' + g * interval '1 second')::timetz", "timetz"},
		{"xid8", "g::text::xid8", "xid8"},
		{"inet[]", "ARRAY[('10.0.0.' || g % 256)::inet, NULL]", "inet[]"},
	}
	conn := pgConn(b, TextSettings, `DROP TABLE IF EXISTS bench_rare`)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			mustExecTB(b, conn, "DROP TABLE IF EXISTS bench_rare", "CREATE TABLE bench_rare AS SELECT "+c.expr+" AS v FROM generate_series(1, 100000) g")
			cols, err := LookupColumns(context.Background(), conn, "bench_rare")
			if err != nil {
				b.Fatal(err)
			}
			data := copyBinary(b, conn, "SELECT v FROM bench_rare")
			b.SetBytes(int64(len(data)))
			var batch Batch
			cpu0 := cpuTime()
			for b.Loop() {
				d, err := NewDecoder(bytes.NewReader(data), cols)
				if err != nil {
					b.Fatal(err)
				}
				for {
					if _, err := d.Next(&batch, 2048); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(100000*float64(b.N)/b.Elapsed().Seconds(), "values/s")
			b.ReportMetric(float64(cpuTime()-cpu0)/100000/float64(b.N), "cpu-ns/value")
		})
	}
}

func mustExecTB(tb testing.TB, conn *pgx.Conn, stmts ...string) {
	tb.Helper()
	for _, s := range stmts {
		if _, err := conn.Exec(context.Background(), s); err != nil {
			tb.Fatalf("%s: %v", s, err)
		}
	}
}

// cpuTime is the process's user and system CPU time (copybintest.CPUTime,
// which this package's tests cannot import).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
