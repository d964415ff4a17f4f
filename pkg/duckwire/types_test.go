package duckwire

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/qpkit/qpkit/pkg/pgtest"
)

// The same values as the fixture's types row, as PostgreSQL literals.
const pgTypesRow = `select -2::smallint, 42::int, 9007199254740993::bigint, 1.5::real, 0.1::float8, 1.50::numeric(10,2),
	170141183460469231731687303715884105727::numeric, 'héllo "q"'::text, true, '2024-01-02'::date,
	'2024-01-02 03:04:05.123456'::timestamp, '2024-01-02 03:04:05.5+00'::timestamptz,
	'1 year 2 months 3 days 04:05:06.5'::interval, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, '\x00ff'::bytea,
	'{"a": [1, 2]}'::json, '{1,NULL,3}'::int[], '{"a b",c}'::text[]`

const duckTypesRow = `select i2, i4, i8, f4, f8, num, big, t, b, d, ts, tstz, iv, u, bl, j, arr, tarr from types where i4 = 42`

// raw runs sql with every result column in format and returns the
// descriptions and the raw values of the first row.
func raw(t *testing.T, c *pgx.Conn, sql string, format int16) ([]pgconn.FieldDescription, [][]byte) {
	t.Helper()
	res := c.PgConn().ExecParams(context.Background(), sql, nil, nil, nil, []int16{format}).Read()
	if res.Err != nil {
		t.Fatalf("%s: %v", sql, res.Err)
	}
	if len(res.Rows) == 0 {
		t.Fatalf("%s: no rows", sql)
	}
	return res.FieldDescriptions, res.Rows[0]
}

// TestTypesMatchPostgres compares type OIDs, typmods and the text and
// binary bytes of every supported type with what PostgreSQL 15 sends for
// the same values, in two time zones.
func TestTypesMatchPostgres(t *testing.T) {
	pg := connect(t, pgtest.Shared(t).URL(), false)
	s := startServer(t, nil)
	duck := connect(t, s.url, false)
	ctx := context.Background()
	for _, tz := range []string{"UTC", "America/New_York"} {
		for _, c := range []*pgx.Conn{pg, duck} {
			if _, err := c.Exec(ctx, "set timezone = '"+tz+"'"); err != nil {
				t.Fatal(err)
			}
		}
		for _, format := range []int16{0, 1} {
			pf, pv := raw(t, pg, pgTypesRow, format)
			df, dv := raw(t, duck, duckTypesRow, format)
			if len(pf) != len(df) {
				t.Fatalf("%d columns, want %d", len(df), len(pf))
			}
			for i := range pf {
				name := df[i].Name
				if df[i].DataTypeOID != pf[i].DataTypeOID {
					t.Errorf("%s: OID %d, want %d", name, df[i].DataTypeOID, pf[i].DataTypeOID)
				}
				if df[i].TypeModifier != pf[i].TypeModifier {
					t.Errorf("%s: typmod %d, want %d", name, df[i].TypeModifier, pf[i].TypeModifier)
				}
				if !bytes.Equal(dv[i], pv[i]) {
					t.Errorf("tz %s format %d %s: got %q, want %q", tz, format, name, dv[i], pv[i])
				}
			}
		}
	}
}

// TestFloatTextMatchesPostgres checks the shortest-round-trip float output
// against PostgreSQL's float8out and float4out.
func TestFloatTextMatchesPostgres(t *testing.T) {
	pg := connect(t, pgtest.Shared(t).URL(), false)
	vals := []float64{0, math.Copysign(0, -1), 1, -1.5, 0.1, 1.0 / 3, 1e15, 1e14 + 0.5, 999999999999999.9, 1e-4, 9.99e-5,
		1e-5, 123456789012345678, 5e-324, math.MaxFloat64, 1e100, -2.5e-10, 100, 1e6, 123456.7, math.Inf(1), math.Inf(-1), math.NaN()}
	for _, bits := range []int{64, 32} {
		typ := "float8"
		if bits == 32 {
			typ = "float4"
		}
		for _, v := range vals {
			var want string
			if err := pg.QueryRow(context.Background(), "select $1::"+typ+"::text", v).Scan(&want); err != nil {
				t.Fatal(err)
			}
			in := v
			if bits == 32 {
				in = float64(float32(v))
			}
			if got := string(appendFloat(nil, in, bits)); got != want {
				t.Errorf("%s %v: got %q, want %q", typ, v, got, want)
			}
		}
	}
}

// TestIntervalTextMatchesPostgres formats PostgreSQL's own binary interval
// values and compares with its text output.
func TestIntervalTextMatchesPostgres(t *testing.T) {
	pg := connect(t, pgtest.Shared(t).URL(), false)
	for _, lit := range []string{"0", "1 day", "-1 day", "1 year", "2 years 1 mon", "-1 year -2 mons +3 days", "1 day -00:00:01",
		"-00:00:00.5", "25:00:00", "1 mon 2 days 03:04:05.000006", "-1 mons 5 days", "100000 hours"} {
		res := pg.PgConn().ExecParams(context.Background(), "select $1::interval, $1::interval::text", [][]byte{[]byte(lit)}, nil, nil, []int16{1, 0}).Read()
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		b := res.Rows[0][0]
		iv := duckdb.Interval{Micros: int64(binary.BigEndian.Uint64(b)), Days: int32(binary.BigEndian.Uint32(b[8:])), Months: int32(binary.BigEndian.Uint32(b[12:]))}
		if got := string(appendInterval(nil, iv)); got != string(res.Rows[0][1]) {
			t.Errorf("%s: got %q, want %q", lit, got, res.Rows[0][1])
		}
	}
}

// TestNumericBinaryMatchesPostgres compares numeric_send bytes and the
// text with scale kept.
func TestNumericBinaryMatchesPostgres(t *testing.T) {
	pg := connect(t, pgtest.Shared(t).URL(), false)
	for _, lit := range []string{"0", "0.00", "1.50", "-1.50", "12345.6789", "10000", "0.0001", "0.00001", "-99999999.99",
		"123456789012345678901234567890.123456", "1e-8", "100000000.000000001"} {
		res := pg.PgConn().ExecParams(context.Background(), "select $1::numeric, $1::numeric::text", [][]byte{[]byte(lit)}, nil, nil, []int16{1, 0}).Read()
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		text := string(res.Rows[0][1])
		digits, scale := strings.ReplaceAll(strings.TrimPrefix(text, "-"), ".", ""), 0
		if i := strings.IndexByte(text, '.'); i >= 0 {
			scale = len(text) - i - 1
		}
		v, _ := new(big.Int).SetString(digits, 10)
		if strings.HasPrefix(text, "-") {
			v.Neg(v)
		}
		got, err := appendNumericBinary(nil, duckdb.Decimal{Width: 38, Scale: uint8(scale), Value: v})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, res.Rows[0][0]) {
			t.Errorf("%s: binary %x, want %x", lit, got, res.Rows[0][0])
		}
		if txt := string(appendDecimal(nil, v, scale)); txt != text {
			t.Errorf("%s: text %q, want %q", lit, txt, text)
		}
		back, err := numericBinaryText(res.Rows[0][0])
		if err != nil || back != text {
			t.Errorf("%s: decoded %q (%v), want %q", lit, back, err, text)
		}
	}
}

// TestDateTimeTextMatchesPostgres formats PostgreSQL's own binary dates
// and timestamps (BC years, far future, infinities, fractions) and
// compares with its text output.
func TestDateTimeTextMatchesPostgres(t *testing.T) {
	pg := connect(t, pgtest.Shared(t).URL(), false)
	if _, err := pg.Exec(context.Background(), "set timezone = 'Asia/Kolkata'"); err != nil {
		t.Fatal(err)
	}
	loc, _ := time.LoadLocation("Asia/Kolkata")
	for _, c := range []struct{ typ, lit string }{
		{"date", "2024-02-29"}, {"date", "0001-01-01 BC"}, {"date", "4713-01-01 BC"}, {"date", "99999-12-31"},
		{"timestamp", "2024-01-02 03:04:05.1"}, {"timestamp", "1999-12-31 23:59:59.999999"}, {"timestamp", "0044-03-15 12:00:00 BC"},
		{"timestamptz", "2024-07-01 00:00:00.000001+00"}, {"timestamptz", "1900-01-01 00:00:00+00"},
	} {
		res := pg.PgConn().ExecParams(context.Background(), "select $1::"+c.typ+", $1::"+c.typ+"::text", [][]byte{[]byte(c.lit)}, nil, nil, []int16{1, 0}).Read()
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		b := res.Rows[0][0]
		var got string
		if c.typ == "date" {
			days := int64(int32(binary.BigEndian.Uint32(b)))
			got = string(appendDate(nil, time.Unix((days+pgEpochUnixDays)*86400, 0).UTC()))
		} else {
			tm := time.UnixMicro(pgEpoch.UnixMicro() + int64(binary.BigEndian.Uint64(b))).UTC()
			if c.typ == "timestamptz" {
				got = string(appendTimestamp(nil, tm.In(loc), true))
			} else {
				got = string(appendTimestamp(nil, tm, false))
			}
		}
		if got != string(res.Rows[0][1]) {
			t.Errorf("%s %s: got %q, want %q", c.typ, c.lit, got, res.Rows[0][1])
		}
	}
}

// TestTimeTZMatchesPostgres checks time and timetz, as the driver hands
// them over, against PostgreSQL's text and binary.
func TestTimeTZMatchesPostgres(t *testing.T) {
	pg := connect(t, pgtest.Shared(t).URL(), false)
	for _, c := range []struct {
		typ, lit string
		v        time.Time
	}{
		{"time", "10:00:00.5", time.Date(1, 1, 1, 10, 0, 0, 5e8, time.UTC)},
		{"timetz", "10:00:00.5+02", time.Date(1, 1, 1, 10, 0, 0, 5e8, time.FixedZone("", 7200))},
		{"timetz", "23:59:59-05:30", time.Date(1, 1, 1, 23, 59, 59, 0, time.FixedZone("", -19800))},
	} {
		typ := tTime
		if c.typ == "timetz" {
			typ = tTimetz
		}
		for _, format := range []int16{0, 1} {
			res := pg.PgConn().ExecParams(context.Background(), "select $1::"+c.typ, [][]byte{[]byte(c.lit)}, nil, nil, []int16{format}).Read()
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			var got []byte
			if format == 0 {
				got = appendText(nil, c.v, typ, time.UTC)
			} else {
				got, _ = appendBinary(nil, c.v, typ, time.UTC)
			}
			if !bytes.Equal(got, res.Rows[0][0]) {
				t.Errorf("%s %s format %d: got %q, want %q", c.typ, c.lit, format, got, res.Rows[0][0])
			}
		}
	}
}
