package duckload

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/qpkit/qpkit/pkg/copybin"
	"github.com/qpkit/qpkit/pkg/copybin/copybintest"
)

// decodeBatches decodes the whole capture once into 2048-row batches, so
// that the sink benchmarks time the writers alone.
func decodeBatches(b *testing.B, data []byte, cols []copybin.Column) []*copybin.Batch {
	d, err := copybin.NewDecoder(bytes.NewReader(data), cols)
	if err != nil {
		b.Fatal(err)
	}
	var out []*copybin.Batch
	for {
		batch := &copybin.Batch{}
		if _, err := d.Next(batch, 2048); err == io.EOF {
			return out
		} else if err != nil {
			b.Fatal(err)
		}
		out = append(out, batch)
	}
}

// BenchmarkAppenderLineitem appends decoded TPC-H lineitem (SF 0.05) to a
// fresh in-memory DuckDB table through one AppenderSink, Close included.
func BenchmarkAppenderLineitem(b *testing.B) { benchAppender(b, 1) }

// BenchmarkAppenderLineitem2 does the same with two sinks on two
// connections appending halves of the batches at once.
func BenchmarkAppenderLineitem2(b *testing.B) { benchAppender(b, 2) }

func benchAppender(b *testing.B, sinks int) {
	data, cols, rows := copybintest.Lineitem(b, 0.05)
	batches := decodeBatches(b, data, cols)
	ctx := context.Background()
	var cpu time.Duration // CPU of the timed parts only
	for b.Loop() {
		b.StopTimer()
		db := openDuck(b)
		if err := CreateTable(ctx, db, "", "lineitem", cols); err != nil {
			b.Fatal(err)
		}
		conns := make([]*sql.Conn, sinks)
		for i := range conns {
			var err error
			if conns[i], err = db.Conn(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		cpu0 := copybintest.CPUTime()
		errs := make(chan error, sinks)
		for k, conn := range conns {
			go func() {
				errs <- conn.Raw(func(dc any) error {
					sink, err := NewAppenderSink(dc.(driver.Conn), "", "lineitem", cols)
					if err != nil {
						return err
					}
					for i := k; i < len(batches); i += sinks {
						if err := sink.Write(batches[i]); err != nil {
							sink.Close()
							return err
						}
					}
					return sink.Close()
				})
			}()
		}
		for range sinks {
			if err := <-errs; err != nil {
				b.Fatal(err)
			}
		}
		cpu += copybintest.CPUTime() - cpu0
		b.StopTimer()
		var n int64
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM lineitem").Scan(&n); err != nil || n != rows {
			b.Fatalf("table has %d rows (%v), want %d", n, err, rows)
		}
		for _, c := range conns {
			c.Close()
		}
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(cpu)/float64(rows)/float64(b.N), "cpu-ns/row")
}

// BenchmarkParquetLineitem writes decoded lineitem to a Parquet file and
// loads it into DuckDB.
func BenchmarkParquetLineitem(b *testing.B) {
	data, cols, rows := copybintest.Lineitem(b, 0.05)
	batches := decodeBatches(b, data, cols)
	ctx := context.Background()
	var cpu time.Duration // CPU of the timed parts only
	for b.Loop() {
		b.StopTimer()
		db := openDuck(b)
		if err := CreateTable(ctx, db, "", "lineitem", cols); err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(b.TempDir(), "l.parquet")
		b.StartTimer()
		cpu0 := copybintest.CPUTime()
		sink, err := NewParquetSink(path, cols)
		if err != nil {
			b.Fatal(err)
		}
		for _, batch := range batches {
			if err := sink.Write(batch); err != nil {
				b.Fatal(err)
			}
		}
		if err := sink.Close(); err != nil {
			b.Fatal(err)
		}
		if err := LoadParquet(ctx, db, "", "lineitem", []string{path}); err != nil {
			b.Fatal(err)
		}
		cpu += copybintest.CPUTime() - cpu0
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(cpu)/float64(rows)/float64(b.N), "cpu-ns/row")
}
