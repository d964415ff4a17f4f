package snapshot

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/qpkit/qpkit/pkg/tpchload"
)

// TestMeasureTPCH times snapshots of TPC-H at SNAPSHOT_MEASURE_SF (e.g.
// 0.1) with both strategies and SNAPSHOT_MEASURE_READERS readers (default
// automatic); it is skipped unless SNAPSHOT_MEASURE_SF is set, as it is a
// measurement, not a check.
func TestMeasureTPCH(t *testing.T) {
	sfText := os.Getenv("SNAPSHOT_MEASURE_SF")
	if sfText == "" {
		t.Skip("set SNAPSHOT_MEASURE_SF to measure")
	}
	sf, err := strconv.ParseFloat(sfText, 64)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	url := newSource(t, "")
	if err := tpchload.LoadPostgres(ctx, url, sf, false); err != nil {
		t.Fatal(err)
	}
	pgInt(t, url, "SELECT count(*) FROM (SELECT 1 FROM lineitem) s") // warm the cache once
	tables := []string{"lineitem", "orders", "partsupp", "part", "customer", "supplier", "nation", "region"}
	for _, strategy := range []Strategy{Appender, Parquet} {
		tgt := target(t)
		start := time.Now()
		readers, _ := strconv.Atoi(os.Getenv("SNAPSHOT_MEASURE_READERS")) // 0: automatic
		res, err := Run(ctx, Options{SourceURL: url, Target: tgt, Tables: tables, Strategy: strategy, Readers: readers})
		if err != nil {
			t.Fatal(err)
		}
		d := time.Since(start)
		var rows, bytes int64
		for _, tr := range res.Tables {
			rows += tr.Rows
			bytes += tr.Bytes
		}
		st, _ := os.Stat(tgt)
		t.Logf("%s: SF %g, %d rows, %.0f MB COPY BINARY in %s: %.0f rows/s, %.1f MB/s; readers %d writers %d; file %.0f MB",
			strategy, sf, rows, float64(bytes)/1e6, d.Round(time.Millisecond), float64(rows)/d.Seconds(),
			float64(bytes)/1e6/d.Seconds(), res.Readers, res.Writers, float64(st.Size())/1e6)
		vstart := time.Now()
		checks, err := Verify(ctx, VerifyOptions{SourceURL: url, Target: tgt})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range checks {
			if !c.Match {
				t.Errorf("%+v", c)
			}
		}
		t.Logf("verify: %s", time.Since(vstart).Round(time.Millisecond))
	}
}
