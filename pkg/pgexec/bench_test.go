// Benchmarks: the executor against bare pgconn running the same pipelined envelope on the same server.

package pgexec

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

const (
	rows100kSQL = "SELECT g, g::text, now() FROM generate_series(1, 100000) g"
	benchSetSQL = "SET LOCAL statement_timeout = 30000"
)

// latencies records one duration per operation and reports the median as
// p50-ns next to ns/op (closed loop: each call starts when the last ends).
type latencies []time.Duration

func newLatencies(b *testing.B) latencies { return make(latencies, 0, b.N) }

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	b.ReportMetric(float64(l[len(l)/2].Nanoseconds()), "p50-ns")
}

func benchExecutor(b *testing.B, sql string, opts Options) {
	pool := newPool(b, 1, true)
	e := newExec(b, pool, opts)
	ctx := context.Background()
	last, err := e.Run(ctx, sql, nil, nil) // connects outside the timed loop
	if err != nil {
		b.Fatal(err)
	}
	lat := newLatencies(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		res, err := e.Run(ctx, sql, nil, last.Doc[:0])
		lat = append(lat, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		last = res
	}
	b.StopTimer()
	lat.report(b)
	b.ReportMetric(float64(len(last.Doc)), "doc-bytes")
}

// bareConn is a plain pgconn connection with the executor's session
// settings.
func bareConn(b *testing.B) *pgconn.PgConn {
	cfg, err := pgconn.ParseConfig(pgtest.Shared(b).URL())
	if err != nil {
		b.Fatal(err)
	}
	for k, v := range sessionParams {
		cfg.RuntimeParams[k] = v
	}
	pc, err := pgconn.ConnectConfig(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pc.Close(context.Background()) })
	return pc
}

// benchBareEnvelope runs BEGIN READ ONLY; SET LOCAL; sql; ROLLBACK as one
// pgconn batch (one Sync, one round trip) and reads every row without
// decoding it: the floor the executor is measured against.
func benchBareEnvelope(b *testing.B, sql string) {
	once := bareEnvelopeOp(b, sql)
	once()
	lat := newLatencies(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		once()
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	lat.report(b)
}

// bareEnvelopeOp returns one bare pipelined envelope call on its own
// connection.
func bareEnvelopeOp(b *testing.B, sql string) func() int {
	pc := bareConn(b)
	ctx := context.Background()
	return func() int {
		// ExecBatch appends its Sync to the batch, so a batch is single-use.
		batch := &pgconn.Batch{}
		batch.ExecParams(beginSQL, nil, nil, nil, nil)
		batch.ExecParams(benchSetSQL, nil, nil, nil, nil)
		batch.ExecParams(sql, nil, nil, nil, nil)
		batch.ExecParams(rollbackSQL, nil, nil, nil, nil)
		n := 0
		mrr := pc.ExecBatch(ctx, batch)
		for mrr.NextResult() {
			rr := mrr.ResultReader()
			for rr.NextRow() {
				n += len(rr.Values())
			}
			if _, err := rr.Close(); err != nil {
				b.Fatal(err)
			}
		}
		if err := mrr.Close(); err != nil {
			b.Fatal(err)
		}
		return n
	}
}

func BenchmarkExecutorSelect1(b *testing.B) { benchExecutor(b, "SELECT 1", Options{}) }

func BenchmarkBarePgxPipelinedSelect1(b *testing.B) { benchBareEnvelope(b, "SELECT 1") }

// BenchmarkBarePgxSelect1NoEnvelope is one extended-protocol SELECT 1: the
// difference to BenchmarkBarePgxPipelinedSelect1 is what the envelope costs.
func BenchmarkBarePgxSelect1NoEnvelope(b *testing.B) {
	pc := bareConn(b)
	ctx := context.Background()
	lat := newLatencies(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		rr := pc.ExecParams(ctx, "SELECT 1", nil, nil, nil, nil)
		for rr.NextRow() {
		}
		if _, err := rr.Close(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	lat.report(b)
}

func BenchmarkExecutor100kRows(b *testing.B) {
	benchExecutor(b, rows100kSQL, Options{MaxRows: 100000, MaxBytes: maxMaxBytes})
}

// BenchmarkExecutor100kRowsTSV is BenchmarkExecutor100kRows with FormatTSV.
func BenchmarkExecutor100kRowsTSV(b *testing.B) {
	benchExecutor(b, rows100kSQL, Options{MaxRows: 100000, MaxBytes: maxMaxBytes, Format: FormatTSV})
}

func BenchmarkBarePgx100kRows(b *testing.B) { benchBareEnvelope(b, rows100kSQL) }

// benchPaired alternates one executor call and one bare pipelined call per
// iteration and reports the medians of each and of the per-iteration
// difference. On a shared, noisy machine drift hits both sides of a pair
// alike, so the paired difference is the executor's overhead estimate.
// ns/op covers both calls.
func benchPaired(b *testing.B, sql string, opts Options) {
	e := newExec(b, newPool(b, 1, true), opts)
	bare := bareEnvelopeOp(b, sql)
	ctx := context.Background()
	var buf []byte
	run(b, e, sql)
	bare()
	execLat, bareLat, diff := newLatencies(b), newLatencies(b), newLatencies(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		res, err := e.Run(ctx, sql, nil, buf[:0])
		t1 := time.Now()
		bare()
		t2 := time.Now()
		if err != nil {
			b.Fatal(err)
		}
		buf = res.JSON
		execLat = append(execLat, t1.Sub(t0))
		bareLat = append(bareLat, t2.Sub(t1))
		diff = append(diff, t1.Sub(t0)-t2.Sub(t1))
	}
	b.StopTimer()
	slices.Sort(execLat)
	slices.Sort(bareLat)
	slices.Sort(diff)
	mid := len(diff) / 2
	b.ReportMetric(float64(execLat[mid].Nanoseconds()), "exec-p50-ns")
	b.ReportMetric(float64(bareLat[mid].Nanoseconds()), "bare-p50-ns")
	b.ReportMetric(float64(diff[mid].Nanoseconds()), "diff-p50-ns")
	b.ReportMetric(float64(execLat[mid])/float64(bareLat[mid]), "exec/bare")
}

func BenchmarkPairedSelect1(b *testing.B) { benchPaired(b, "SELECT 1", Options{}) }

func BenchmarkPaired100kRows(b *testing.B) {
	benchPaired(b, rows100kSQL, Options{MaxRows: 100000, MaxBytes: maxMaxBytes})
}

// BenchmarkAppendRow is the client's work per row alone, without a server:
// one row of rows100kSQL's shape (int4, text, timestamptz) in each format.
func BenchmarkAppendRow(b *testing.B) {
	cols := []colInfo{{typ: types[23]}, {typ: types[25]}, {typ: types[1184]}}
	vals := [][]byte{[]byte("54321"), []byte("54321"), []byte("2024-01-02 03:04:05.123456+00")}
	for _, f := range []Format{FormatJSON, FormatTSV} {
		b.Run(f.String(), func(b *testing.B) {
			s := serializer{format: f}
			dst := make([]byte, 0, 1<<16)
			b.ReportAllocs()
			for b.Loop() {
				var ok bool
				if dst, ok = s.appendRow(dst[:0], 0, 1<<20, true, vals, cols); !ok {
					b.Fatal("row did not fit")
				}
			}
			b.ReportMetric(float64(len(dst)), "row-bytes")
		})
	}
}
