package tpch

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func generate(t *testing.T, sf float64, tb Table, opt Options) []byte {
	t.Helper()
	g, err := NewGenerator(sf)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	st, err := g.WriteTable(context.Background(), &buf, tb, opt)
	if err != nil {
		t.Fatal(err)
	}
	if st.Bytes != int64(buf.Len()) || st.Rows != int64(bytes.Count(buf.Bytes(), []byte{'\n'})) {
		t.Fatalf("%s: stats %+v do not match output (%d bytes)", tb, st, buf.Len())
	}
	return buf.Bytes()
}

func TestChecksumsCopy(t *testing.T) {
	checkSums(t, "copytext-checksums.tsv", FormatCopy, map[string]bool{"0.01": true}, 1)
}

// TestChecksumsExtra covers scale factors outside the reference set, with
// checksums computed from dbgen 2.14.0's own output (see testdata/README.md).
func TestChecksumsExtra(t *testing.T) {
	checkSums(t, "extra-checksums.tsv", FormatTbl, map[string]bool{
		"0.0001": true, "0.0015": true, "0.005": true, "0.02": true, "0.037": true, "1.5": true, "2.5": true,
	}, 0)
}

func TestLong(t *testing.T) {
	if os.Getenv("TPCH_LONG") != "1" {
		t.Skip("set TPCH_LONG=1 for SF 0.1 and SF 1 checksums")
	}
	sfs := map[string]bool{"0.1": true, "1": true}
	checkSums(t, "dbgen-checksums.tsv", FormatTbl, sfs, 0)
	checkSums(t, "copytext-checksums.tsv", FormatCopy, sfs, 0)
	checkSums(t, "extra-checksums.tsv", FormatTbl, map[string]bool{"0.37": true}, 0)
}

// TestHead compares the first rows of each table with the verbatim sample.
func TestHead(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "sf0.01-head.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string][]string{}
	var cur string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "== ") {
			cur = strings.TrimSuffix(strings.Fields(line)[1], ".tbl")
			continue
		}
		if line != "" {
			want[cur] = append(want[cur], line)
		}
	}
	if len(want) != 8 {
		t.Fatalf("head file has %d tables", len(want))
	}
	for _, tb := range Tables {
		out := generate(t, 0.01, tb, Options{})
		got := strings.SplitN(string(out), "\n", len(want[tb.String()])+1)
		for i, w := range want[tb.String()] {
			if got[i] != w {
				t.Errorf("%s row %d:\n got %q\nwant %q", tb, i+1, got[i], w)
			}
		}
	}
}

// TestPartsConcat checks that chunks 1..N concatenate to the whole table.
func TestPartsConcat(t *testing.T) {
	old := testBlock
	testBlock = 97 // make block boundaries fall inside chunks too
	defer func() { testBlock = old }()
	for _, tb := range Tables {
		whole := generate(t, 0.01, tb, Options{Jobs: 1})
		for _, n := range []int{1, 3, 7} {
			var cat []byte
			for k := 1; k <= n; k++ {
				part := generate(t, 0.01, tb, Options{Parts: n, Part: k, Jobs: 2})
				if !tb.Chunked() && k > 1 && len(part) != 0 {
					t.Errorf("%s: chunk %d of %d is not empty", tb, k, n)
				}
				cat = append(cat, part...)
			}
			if !bytes.Equal(cat, whole) {
				t.Errorf("%s: %d chunks do not concatenate to the whole table", tb, n)
			}
		}
	}
}

// TestChunkBoundaries checks the split against dbgen's set_state rule.
func TestChunkBoundaries(t *testing.T) {
	g, err := NewGenerator(0.01)
	if err != nil {
		t.Fatal(err)
	}
	// 15000 orders in 7 chunks: 2142 each, the last 2142+6.
	for k, want := range [][2]int64{{1, 2142}, {2143, 2142}, {12853, 2148}} {
		part := []int{1, 2, 7}[k]
		f, n := g.UnitRange(Lineitem, 7, part)
		if f != want[0] || n != want[1] {
			t.Errorf("lineitem chunk %d/7: got (%d, %d), want %v", part, f, n, want)
		}
	}
	// More chunks than suppliers: all rows go to the last chunk.
	g2, _ := NewGenerator(0.001)
	if f, n := g2.UnitRange(Supplier, 20, 20); f != 1 || n != 10 {
		t.Errorf("supplier 20/20 at SF 0.001: got (%d, %d)", f, n)
	}
	if _, n := g2.UnitRange(Supplier, 20, 3); n != 0 {
		t.Errorf("supplier 3/20 at SF 0.001 has %d rows", n)
	}
}

// TestJobs checks that parallel generation writes the same bytes.
func TestJobs(t *testing.T) {
	old := testBlock
	defer func() { testBlock = old }()
	for _, tb := range Tables {
		testBlock = 0
		one := generate(t, 0.01, tb, Options{Jobs: 1})
		for _, blk := range []int64{0, 1, 13} {
			testBlock = blk
			for _, jobs := range []int{2, 3} {
				if got := generate(t, 0.01, tb, Options{Jobs: jobs}); !bytes.Equal(got, one) {
					t.Errorf("%s: --jobs %d with block %d differs from --jobs 1", tb, jobs, blk)
				}
			}
		}
	}
}

// TestWriteTablesTogether checks that generating part+partsupp and
// orders+lineitem in one pass writes the same bytes as one table at a time.
func TestWriteTablesTogether(t *testing.T) {
	g, err := NewGenerator(0.01)
	if err != nil {
		t.Fatal(err)
	}
	bufs := map[Table]*bytes.Buffer{}
	stats, err := g.WriteTables(context.Background(), Tables, func(tb Table) (io.Writer, error) {
		bufs[tb] = &bytes.Buffer{}
		return bufs[tb], nil
	}, Options{Format: FormatCSV, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range Tables {
		want := generate(t, 0.01, tb, Options{Format: FormatCSV})
		if !bytes.Equal(bufs[tb].Bytes(), want) {
			t.Errorf("%s differs when generated with the other tables", tb)
		}
		if stats[tb].Bytes != int64(len(want)) {
			t.Errorf("%s: stats say %d bytes, want %d", tb, stats[tb].Bytes, len(want))
		}
	}
}

func TestRowCount(t *testing.T) {
	for _, r := range readSums(t, "dbgen-checksums.tsv") {
		var sf float64
		fmt.Sscan(r.sf, &sf)
		n, err := RowCount(r.table, sf)
		if err != nil {
			t.Fatal(err)
		}
		if n != r.rows {
			t.Errorf("RowCount(%s, %s) = %d, want %d", r.table, r.sf, n, r.rows)
		}
	}
	for _, sf := range []float64{0, -1, 2e9} {
		if _, err := RowCount(Nation, sf); err == nil {
			t.Errorf("RowCount at SF %v: no error", sf)
		}
	}
}

// TestScale pins dbgen's scale-factor arithmetic.
func TestScale(t *testing.T) {
	cases := []struct {
		sf                       float64
		n, part, supp, cust, ord int64
	}{
		{0.0001, 1, 1, 1, 1, 1},
		{0.0015, 1, 200, 10, 150, 1500},
		{0.37, 1, 74000, 3700, 55500, 555000},
		{0.999, 1, 199800, 9990, 149850, 1498500},
		{1, 1, 200000, 10000, 150000, 1500000},
		{1.5, 1, 200000, 10000, 150000, 1500000},
		{2.5, 2, 400000, 20000, 300000, 3000000},
		{100, 100, 20000000, 1000000, 15000000, 150000000},
	}
	for _, c := range cases {
		s, err := newScale(c.sf)
		if err != nil {
			t.Fatal(err)
		}
		if s.n != c.n || s.partRows() != c.part || s.suppRows() != c.supp || s.custRows() != c.cust || s.orderRows() != c.ord {
			t.Errorf("SF %v: got scale %d rows %d/%d/%d/%d", c.sf, s.n, s.partRows(), s.suppRows(), s.custRows(), s.orderRows())
		}
	}
}

type errWriter struct {
	n   int
	err error
}

func (w *errWriter) Write(p []byte) (int, error) {
	if w.n <= 0 {
		return 0, w.err
	}
	w.n--
	return len(p), nil
}

// TestWriteError checks that a failing writer stops generation with its
// error, at every job count.
func TestWriteError(t *testing.T) {
	g, err := NewGenerator(0.01)
	if err != nil {
		t.Fatal(err)
	}
	for _, jobs := range []int{1, 2, 4} {
		w := &errWriter{n: 2, err: syscall.EPIPE}
		_, err := g.WriteTable(context.Background(), w, Lineitem, Options{Jobs: jobs})
		if !errors.Is(err, syscall.EPIPE) {
			t.Errorf("jobs %d: got %v, want EPIPE", jobs, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.WriteTable(ctx, io.Discard, Lineitem, Options{Jobs: 2}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: got %v", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	g, err := NewGenerator(0.001)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{Parts: 4, Part: 5}, {Part: 1}, {Parts: 2}, {Format: 7}, {Jobs: -1}} {
		if _, err := g.WriteTable(context.Background(), io.Discard, Nation, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

func TestQueries(t *testing.T) {
	for n := 1; n <= NumQueries; n++ {
		q, err := Query(n)
		if err != nil {
			t.Fatal(err)
		}
		lq := strings.ToLower(q)
		if strings.Count(q, ";") != 1 || !strings.HasSuffix(q, ";") {
			t.Errorf("Q%d is not one statement ending in ';'", n)
		}
		if strings.Contains(lq, "create ") || strings.Contains(lq, "drop ") || strings.HasPrefix(q, "--") {
			t.Errorf("Q%d is not a plain read-only statement", n)
		}
	}
	if q, _ := Query(15); !strings.HasPrefix(q, "with revenue0 (supplier_no, total_revenue) as (") {
		t.Errorf("Q15 is not in WITH form: %.60q", q)
	}
	if _, err := Query(0); err == nil {
		t.Error("Query(0): no error")
	}
}

func TestSchema(t *testing.T) {
	for _, tb := range Tables {
		if !strings.Contains(SchemaSQL, "CREATE TABLE "+tb.String()+" (") {
			t.Errorf("schema lacks %s", tb)
		}
	}
	if !strings.Contains(ConstraintsSQL, "ON lineitem (l_partkey, l_suppkey)") {
		t.Error("constraints lack the lineitem (l_partkey, l_suppkey) index")
	}
	if strings.Contains(ConstraintsSQL, "CREATE TABLE") || strings.Contains(SchemaSQL, "PRIMARY KEY") {
		t.Error("schema and constraints overlap")
	}
}

func TestDistsSHA(t *testing.T) {
	// dists.dss must stay byte-for-byte the file dbgen 2.14.0 ships.
	const want = "%x"
	sum := fmt.Sprintf(want, sha256.Sum256([]byte(distsDSS)))
	if sum != distsSHA256 {
		t.Errorf("dists.dss sha256 %s, want %s", sum, distsSHA256)
	}
}

const distsSHA256 = "4dc56300de1e5ac5e1900519794538e2b5d1b6caf5cd55703bf53000dd748876"
