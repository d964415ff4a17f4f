package duckwire

import (
	"context"
	"database/sql/driver"
	"math/big"
	"net"
	"testing"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// discardConn is a net.Conn whose writes go nowhere.
type discardConn struct {
	net.Conn
	n int64
}

func (d *discardConn) Write(b []byte) (int, error) { d.n += int64(len(b)); return len(b), nil }

// mixedRows is n rows of lineitem-like mixed types, as the driver hands
// them over.
func mixedRows(n int) *localRows {
	cols := []column{
		{"orderkey", tInt8}, {"partkey", tInt4}, {"quantity", decimal(15, 2)}, {"price", tFloat8},
		{"flag", tText}, {"comment", tText}, {"shipdate", tDate}, {"ts", tTimestamp}, {"ok", tBool},
	}
	r := &localRows{cols: cols}
	day := time.Date(1995, 3, 15, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		r.rows = append(r.rows, []driver.Value{
			int64(i), int32(i % 200000), duckdb.Decimal{Width: 15, Scale: 2, Value: big.NewInt(int64(i%5000) * 100)},
			float64(i) * 1.25, "R", "carefully final deposits detect slyly agai", day.AddDate(0, 0, i%2000),
			day.Add(time.Duration(i) * time.Second), i%2 == 0,
		})
	}
	return r
}

// BenchmarkEncodeRows encodes 100k mixed rows into DataRows, text and
// binary; rows/s is reported.
func BenchmarkEncodeRows(b *testing.B) {
	const n = 100_000
	rs := mixedRows(n)
	for _, format := range []int16{0, 1} {
		name := map[int16]string{0: "text", 1: "binary"}[format]
		b.Run(name, func(b *testing.B) {
			dc := &discardConn{}
			ss := &session{conn: dc, settings: newSettings(Config{TimeZone: "UTC"}, nil), out: make([]byte, 0, 8<<10)}
			dst := make([]driver.Value, len(rs.cols))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rs.i = 0
				sent, _, err := ss.writeRows(rs, []int16{format}, 0, dst)
				if err != nil || sent != n {
					b.Fatal(sent, err)
				}
				ss.flush()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(dc.n)/float64(b.N)/n, "bytes/row")
		})
	}
}

// BenchmarkServerResult reads 100k mixed rows through the server with pgx
// (extended protocol, binary), DuckDB's work and pgx's decoding included; rows/s is reported.
func BenchmarkServerResult(b *testing.B) {
	s := startServer(b, func(c *Config) { c.Dialect = Passthrough }) // DuckDB's range()
	c := connect(b, s.url, false)
	const q = `select i::bigint as k, (i % 1000)::int as p, (i % 5000)::numeric(15,2) / 100 as q, i * 1.25 as f,
		'carefully final deposits ' || (i % 100)::text as c, date '1995-01-01' + (i % 2000)::int as d
		from range(1, 100001) g(i)`
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rows, err := c.Query(context.Background(), q)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		if rows.Err() != nil || n != 100_000 {
			b.Fatal(n, rows.Err())
		}
	}
	b.ReportMetric(100_000*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
