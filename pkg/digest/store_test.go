// Tests of the shape store: statistics, eviction order, reset, concurrency and percentile accuracy.

package digest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/qpkit/qpkit/pkg/tpch"
)

// fakeClock returns a store whose clock advances one second per call.
func fakeClock(s *Store) {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { t = t.Add(time.Second); return t }
}

func TestStoreStatistics(t *testing.T) {
	s := NewStore(0)
	fakeClock(s)
	s.Observe("main", "primary", "SELECT 1", 3*time.Millisecond, 1, "")
	s.Observe("main", "primary", "select 2", 1*time.Millisecond, 1, "00000")
	s.Observe("main", "primary", "select  3;", 2*time.Millisecond, 0, "22012")
	s.Observe("main", "replica", "select 4", 10*time.Millisecond, 1, "")
	s.Observe("other", "primary", "select 5", 20*time.Millisecond, 1, "01000")

	shapes, sum := s.Snapshot()
	if sum.Shapes != 3 || sum.MaxShapes != DefaultMaxShapes || len(shapes) != 3 {
		t.Fatalf("summary %+v with %d shapes, want 3 shapes", sum, len(shapes))
	}
	// Sorted by total time: other (20ms), main/replica (10ms), main/primary (6ms).
	if shapes[0].Pool != "other" || shapes[1].Route != "replica" || shapes[2].Route != "primary" {
		t.Fatalf("order: %+v", shapes)
	}
	sh := shapes[2]
	want := Shape{
		Fingerprint: shapes[0].Fingerprint, Pool: "main", Route: "primary", Query: "select $1",
		Calls: 3, Errors: 1, Rows: 2,
		TotalNs: int64(6 * time.Millisecond), MeanNs: int64(2 * time.Millisecond),
		MinNs: int64(time.Millisecond), MaxNs: int64(3 * time.Millisecond),
		FirstSeen: time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC),
		LastSeen:  time.Date(2026, 1, 1, 0, 0, 3, 0, time.UTC),
	}
	if sh.Fingerprint != shapes[0].Fingerprint || len(sh.Fingerprint) != 16 {
		t.Errorf("fingerprints %q and %q should be the same 16 hex digits", sh.Fingerprint, shapes[0].Fingerprint)
	}
	if sh.Query != want.Query || sh.Calls != want.Calls || sh.Errors != want.Errors || sh.Rows != want.Rows ||
		sh.TotalNs != want.TotalNs || sh.MeanNs != want.MeanNs || sh.MinNs != want.MinNs || sh.MaxNs != want.MaxNs ||
		!sh.FirstSeen.Equal(want.FirstSeen) || !sh.LastSeen.Equal(want.LastSeen) {
		t.Errorf("shape\n got  %+v\n want %+v", sh, want)
	}
	if math.Abs(float64(sh.P50Ns)-2e6)/2e6 > 1.0/16 || sh.P99Ns != sh.MaxNs {
		t.Errorf("p50 %d (want ~2ms), p99 %d (want the max %d)", sh.P50Ns, sh.P99Ns, sh.MaxNs)
	}
	if len(sh.Warnings) != 1 {
		t.Errorf("warnings %q, want one about few calls", sh.Warnings)
	}

	s.Reset()
	if shapes, sum := s.Snapshot(); len(shapes) != 0 || sum.Shapes != 0 || sum.Evicted != 0 {
		t.Errorf("after Reset: %d shapes, %+v", len(shapes), sum)
	}
}

func TestStoreEvictsLeastRecentlySeen(t *testing.T) {
	s := NewStore(3)
	fakeClock(s)
	s.Observe("p", "r", "select a", time.Millisecond, 0, "")
	s.Observe("p", "r", "select b", time.Millisecond, 0, "")
	s.Observe("p", "r", "select c", time.Millisecond, 0, "")
	s.Observe("p", "r", "select a", time.Millisecond, 0, "") // a is now the most recent
	s.Observe("p", "r", "select d", time.Millisecond, 0, "") // evicts b
	s.Observe("p", "r", "select e", time.Millisecond, 0, "") // evicts c
	shapes, sum := s.Snapshot()
	var got []string
	for _, sh := range shapes {
		got = append(got, sh.Query)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"select a", "select d", "select e"}) || sum.Evicted != 2 || s.Len() != 3 {
		t.Errorf("kept %q, evicted %d; want a, d, e and 2", got, sum.Evicted)
	}
}

// The total behind sqp_digest_evictions_total is a Prometheus counter:
// a reset of the store clears Evicted but must not lower it.
func TestStoreEvictedTotalSurvivesReset(t *testing.T) {
	s := NewStore(1)
	fakeClock(s)
	s.Observe("p", "r", "select a", time.Millisecond, 0, "")
	s.Observe("p", "r", "select b", time.Millisecond, 0, "") // evicts a
	s.Reset()
	s.Observe("p", "r", "select c", time.Millisecond, 0, "")
	s.Observe("p", "r", "select d", time.Millisecond, 0, "") // evicts c
	if sum := s.Summary(); sum.Evicted != 1 || sum.EvictedTotal != 2 {
		t.Errorf("evicted %d since the reset and %d in all; want 1 and 2", sum.Evicted, sum.EvictedTotal)
	}
}

func TestStoreConcurrent(t *testing.T) {
	s := NewStore(50)
	const workers, per = 8, 2000
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range per {
				sql := pgbenchSimple[r.IntN(len(pgbenchSimple))]
				if i%10 == 0 {
					sql = "select * from t" + string(rune('a'+r.IntN(26))) + string(rune('a'+r.IntN(26)))
				}
				s.Observe([]string{"a", "b"}[i%2], "primary", sql, time.Duration(r.IntN(1e6)), 1, "")
				if i%500 == 0 {
					s.Snapshot()
				}
			}
		})
	}
	wg.Wait()
	shapes, sum := s.Snapshot()
	if len(shapes) > 50 || sum.Shapes != len(shapes) {
		t.Fatalf("%d shapes held, max 50", len(shapes))
	}
	var calls uint64
	for _, sh := range shapes {
		calls += sh.Calls
	}
	if calls > workers*per || calls < workers*per*8/10 {
		t.Errorf("%d calls kept of %d", calls, workers*per)
	}
}

// TestPercentileAccuracy checks the documented bound: within 1/16 of the
// exact nearest-rank percentile, for log-normal latencies from about 20 µs
// to 10 s.
func TestPercentileAccuracy(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for trial := range 20 {
		s := NewStore(0)
		n := 100 + r.IntN(5000)
		mu, sigma := math.Log(1e6)+r.NormFloat64(), 0.3+2*r.Float64()
		xs := make([]time.Duration, n)
		for i := range xs {
			v := math.Exp(mu + sigma*r.NormFloat64())
			xs[i] = time.Duration(min(max(v, 2e4), 1e10))
			s.Observe("p", "r", "select 1", xs[i], 0, "")
		}
		slices.Sort(xs)
		shapes, _ := s.Snapshot()
		for _, c := range []struct {
			q   float64
			got int64
		}{{0.5, shapes[0].P50Ns}, {0.99, shapes[0].P99Ns}} {
			exact := xs[int(math.Ceil(c.q*float64(n)))-1]
			if rel := math.Abs(float64(c.got)-float64(exact)) / float64(exact); rel > 1.0/16 {
				t.Errorf("trial %d n=%d q=%v: got %d, exact %d, error %.3f > 1/16", trial, n, c.q, c.got, exact, rel)
			}
		}
	}
}

func TestHistBuckets(t *testing.T) {
	prevHi := int64(0)
	for i := range histLen {
		lo, hi := histBounds(i)
		if lo != prevHi || hi <= lo {
			t.Fatalf("bucket %d is [%d, %d), previous ended at %d", i, lo, hi, prevHi)
		}
		if i < histLen-1 && (histIndex(lo) != i || histIndex(hi-1) != i) {
			t.Fatalf("bucket %d [%d, %d): histIndex gives %d and %d", i, lo, hi, histIndex(lo), histIndex(hi-1))
		}
		if i > 0 && i < histLen-1 && float64(hi-lo)/float64(lo) > 1.0/8+1e-12 {
			t.Fatalf("bucket %d [%d, %d) is wider than 1/8 of its lower bound", i, lo, hi)
		}
		prevHi = hi
	}
	if histIndex(-5) != 0 || histIndex(math.MaxInt64) != histLen-1 {
		t.Fatal("out-of-range durations are not clamped to the end buckets")
	}
}

func TestStoreTruncatesLongText(t *testing.T) {
	s := NewStore(0)
	long := "select " + strings.Repeat("größe, ", 2000) + "1"
	s.Observe("p", "r", long, time.Millisecond, 0, "")
	shapes, _ := s.Snapshot()
	q := shapes[0].Query
	if !shapes[0].Truncated || len(q) > MaxTextBytes || len(q) < MaxTextBytes-4 || !utf8.ValidString(q) {
		t.Errorf("truncated=%v, %d bytes, valid UTF-8 %v", shapes[0].Truncated, len(q), utf8.ValidString(q))
	}
	if shapes[0].Fingerprint != fmt.Sprintf("%016x", Fingerprint(long)) {
		t.Error("the fingerprint does not cover the whole text")
	}
}

// TestStoreTextCache checks that statements without constants are
// normalized once and then served from the text cache with the same
// shape, that statements with constants and over-long ones are not kept,
// and that the cache stays within its bound.
func TestStoreTextCache(t *testing.T) {
	s := NewStore(0)
	param := "SELECT abalance FROM pgbench_accounts WHERE aid = $1;"
	literal := "SELECT abalance FROM pgbench_accounts WHERE aid = 42;"
	long := "select " + strings.Repeat("a, ", maxCachedSQL/3) + "b from t where c = $1"
	for range 3 {
		s.Observe("main", "primary", param, time.Millisecond, 1, "")
		s.Observe("main", "primary", literal, time.Millisecond, 1, "")
		s.Observe("main", "primary", long, time.Millisecond, 1, "")
	}
	if n := cached(s); n != 1 {
		t.Fatalf("text cache holds %d statements, want only the parameterized one", n)
	}
	v, ok := s.texts.Load(param)
	if !ok {
		t.Fatal("parameterized statement not cached")
	}
	c := v.(*normalized)
	text, fp := Normalize(param)
	if c.fp != fp || string(c.text) != text {
		t.Fatalf("cached %x %q, want %x %q", c.fp, c.text, fp, text)
	}
	// The literal and the $1 form are one shape: 6 calls, whichever path.
	shapes, _ := s.Snapshot()
	calls := map[string]uint64{}
	for _, sh := range shapes {
		calls[sh.Query] += sh.Calls
	}
	if calls[text] != 6 || len(shapes) != 2 {
		t.Fatalf("%d shapes, %d calls of %q; want 2 shapes and 6 calls", len(shapes), calls[text], text)
	}

	// Many distinct parameterized statements: the cache empties and
	// refills instead of growing.
	for i := range 20000 {
		s.Observe("main", "primary", fmt.Sprintf("select c%d from t where k = $1", i), time.Millisecond, 1, "")
		if n := s.textBytes.Load(); n > maxCacheBytes {
			t.Fatalf("after %d statements the cache holds %d bytes, bound %d", i+1, n, maxCacheBytes)
		}
	}
	if n := cached(s); n == 0 || n >= 20000 {
		t.Fatalf("cache holds %d statements after 20000 distinct ones", n)
	}
}

// TestStoreTextCacheSameShapes runs the normalizer's test inputs through a
// store twice (the second time from the cache where they qualify) and
// checks every fingerprint against Normalize.
func TestStoreTextCacheSameShapes(t *testing.T) {
	s := NewStore(0)
	inputs := slices.Concat(pgbenchSimple, pgbenchExtended, []string{
		"select $1::int, $2 -- a comment\n", "select $$x$$, $1", "select * from t where a in ($1, $2, $3)",
		"insert into t values ($1, $2), ($3, $4)", "select a from t order by 2", "select 'a'\n'b', e'\\'', $1",
	})
	for n := 1; n <= tpch.NumQueries; n++ {
		q, err := tpch.Query(n)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, q)
	}
	for pass := range 2 {
		for _, sql := range inputs {
			s.Reset()
			s.Observe("p", "r", sql, time.Millisecond, 1, "")
			shapes, _ := s.Snapshot()
			text, fp := Normalize(sql)
			if len(shapes) != 1 || shapes[0].Fingerprint != fmt.Sprintf("%016x", fp) || shapes[0].Query != text {
				t.Fatalf("pass %d, %q: shapes %+v, want %016x %q", pass, sql, shapes, fp, text)
			}
		}
	}
	if cached(s) == 0 {
		t.Fatal("no test input was cached")
	}
}

// cached counts the statements in s's text cache.
func cached(s *Store) (n int) {
	s.texts.Range(func(_, _ any) bool { n++; return true })
	return n
}
