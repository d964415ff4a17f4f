package copybin_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/qpkit/qpkit/pkg/copybin"
	"github.com/qpkit/qpkit/pkg/copybin/copybintest"
)

// BenchmarkDecodeLineitem decodes a captured COPY BINARY stream of TPC-H
// lineitem (SF 0.05, about 300,000 rows) in 2048-row batches.
func BenchmarkDecodeLineitem(b *testing.B) {
	data, cols, rows := copybintest.Lineitem(b, 0.05)
	b.SetBytes(int64(len(data)))
	var batch copybin.Batch
	cpu0 := copybintest.CPUTime()
	for b.Loop() {
		d, err := copybin.NewDecoder(bytes.NewReader(data), cols)
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
		if d.Rows() != rows {
			b.Fatalf("decoded %d rows, want %d", d.Rows(), rows)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(copybintest.CPUTime()-cpu0)/float64(rows)/float64(b.N), "cpu-ns/row")
}
