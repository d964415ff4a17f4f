// tpchgen behaviour checked by a review of 2026-12-05; where a test's
// comment names a fault, it is what the code did before the fix.

package tpch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

// TestTPCHReviewCancelChunkAt64BitScale: from scale 30000 on, a chunk of
// orders or lineitem positions l_partkey's 64-bit stream by replaying every
// earlier order (pk64Cache.seek, order.go), and that loop never looks at the
// context. Chunk 654321 of 1000000 at SF 30000 replays ~2.9e10 orders
// (tens of minutes); cancelling the context (tpchgen's SIGINT/SIGTERM,
// docs/tpchgen.md "exit 1 ... interrupted") has no effect until the replay
// is over. Expected: WriteTable returns context.Canceled promptly.
func TestTPCHReviewCancelChunkAt64BitScale(t *testing.T) {
	g, err := NewGenerator(30000)
	if err != nil {
		t.Fatal(err)
	}
	for _, jobs := range []int{1, 2} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		done := make(chan error, 1)
		go func() {
			_, err := g.WriteTable(ctx, io.Discard, Orders, Options{Parts: 1000000, Part: 654321, Jobs: jobs})
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				t.Errorf("jobs %d: got %v, want the context's error", jobs, err)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("jobs %d: WriteTable still running 15s after its context was cancelled (replaying orders in pk64Cache.seek ignores ctx)", jobs)
		}
		cancel()
		// The stuck goroutine keeps running; do not start a second one.
		if t.Failed() {
			return
		}
	}
}

// TestTPCHReviewRowCountsTabSeparated: docs/formats.md ("tpchgen count":
// "One line per table: <table> <rows> separated by a tab") and
// docs/tpchgen.md ("<table>\t<rows>" per table) document a tab, but
// WriteRowCounts (listing.go:18) writes "%s %d\n" with a space.
func TestTPCHReviewRowCountsTabSeparated(t *testing.T) {
	var b bytes.Buffer
	if err := WriteRowCounts(&b, 0.01); err != nil {
		t.Fatal(err)
	}
	want := "nation\t25\nregion\t5\npart\t2000\nsupplier\t100\npartsupp\t8000\ncustomer\t1500\norders\t15000\nlineitem\t60175\n"
	if b.String() != want {
		t.Errorf("WriteRowCounts(0.01) = %q, want %q (tab-separated, as docs/formats.md says)", b.String(), want)
	}
}

// TestTPCHReviewChunksConcatOddScales (passes): at scale factors where
// dbgen's arithmetic rounds (one row per table at 0.0001, whole thousandths
// at 0.0015) and with more chunks than rows, chunks 1..N concatenate to
// the whole table for every table, with no row lost or repeated.
func TestTPCHReviewChunksConcatOddScales(t *testing.T) {
	for _, sf := range []float64{0.0001, 0.0015} {
		for _, tb := range Tables {
			whole := generate(t, sf, tb, Options{Jobs: 1})
			for _, n := range []int{2, 5, 11} {
				var cat []byte
				for k := 1; k <= n; k++ {
					cat = append(cat, generate(t, sf, tb, Options{Parts: n, Part: k, Jobs: 2})...)
				}
				if !bytes.Equal(cat, whole) {
					t.Errorf("SF %v %s: %d chunks do not concatenate to the whole table", sf, tb, n)
				}
			}
		}
	}
}

// TestTPCHReviewCopyAndCSVEscaping (passes): the COPY text and CSV writers
// escape what their formats need, and COPY has no trailing delimiter.
func TestTPCHReviewCopyAndCSVEscaping(t *testing.T) {
	r := newRowBuf(FormatCopy, 0)
	r.int(1)
	r.str([]byte("a\\b\tc\nd\re|f"))
	r.endRow()
	if got, want := string(r.b), "1\ta\\\\b\\tc\\nd\\re|f\n"; got != want {
		t.Errorf("copy: %q, want %q", got, want)
	}
	c := newRowBuf(FormatCSV, 0)
	c.str([]byte(`x,"y"`))
	c.str([]byte("plain"))
	c.endRow()
	if got, want := string(c.b), "\"x,\"\"y\"\"\",plain\n"; got != want {
		t.Errorf("csv: %q, want %q", got, want)
	}
}
