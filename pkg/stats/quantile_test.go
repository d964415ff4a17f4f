// Tests of Quantile, Mean, Median, Summarize, MinN and TailWarnings.

package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func near(got, want float64) bool {
	return math.Abs(got-want) <= 1e-12*math.Max(1, math.Abs(want))
}

// Expected values are numpy.quantile (numpy 1.24.2, default method "linear",
// i.e. Hyndman-Fan type 7), and can be checked by hand: for [1 2 3 4] and
// q = 0.95, h = 3·0.95 = 2.85, so 3 + 0.85·(4-3) = 3.85.
func TestQuantile(t *testing.T) {
	x := []float64{1, 2, 3, 4}
	for _, c := range []struct{ q, want float64 }{
		{0, 1}, {0.25, 1.75}, {0.5, 2.5}, {0.95, 3.85}, {0.99, 3.97}, {1, 4},
	} {
		if got := Quantile(x, c.q); !near(got, c.want) {
			t.Errorf("Quantile(%v, %v) = %v, want %v", x, c.q, got, c.want)
		}
	}
	for _, q := range []float64{0, 0.3, 1} {
		if got := Quantile([]float64{7}, q); got != 7 {
			t.Errorf("Quantile([7], %v) = %v, want 7", q, got)
		}
	}
	// Ties and an infinite top value: frac = 0 must not compute 0·Inf.
	if got := Quantile([]float64{1, 5, 5, math.Inf(1)}, 1.0/3); got != 5 {
		t.Errorf("Quantile at an exact order statistic = %v, want 5", got)
	}
	for _, c := range []struct {
		x []float64
		q float64
	}{{nil, 0.5}, {[]float64{}, 0}, {x, -0.01}, {x, 1.01}, {x, math.NaN()}} {
		if got := Quantile(c.x, c.q); !math.IsNaN(got) {
			t.Errorf("Quantile(%v, %v) = %v, want NaN", c.x, c.q, got)
		}
	}
}

func TestMeanMedian(t *testing.T) {
	x := []float64{4, 1, 3, 2}
	if got := Mean(x); got != 2.5 {
		t.Errorf("Mean = %v, want 2.5", got)
	}
	if got := Median(x); got != 2.5 {
		t.Errorf("Median = %v, want 2.5", got)
	}
	if !slices.Equal(x, []float64{4, 1, 3, 2}) {
		t.Errorf("Median modified its input: %v", x)
	}
	if got := Median([]float64{9, 1, 5}); got != 5 {
		t.Errorf("Median odd = %v, want 5", got)
	}
	if !math.IsNaN(Mean(nil)) || !math.IsNaN(Median(nil)) {
		t.Error("Mean or Median of an empty slice is not NaN")
	}
}

func TestSummarize(t *testing.T) {
	x := []float64{4, 1, 3, 2}
	got := Summarize(x)
	want := Summary{N: 4, Min: 1, P50: 2.5, P95: 3.85, P99: 3.97, Max: 4, Mean: 2.5}
	if got.N != want.N || got.Min != want.Min || got.Max != want.Max || !near(got.P50, want.P50) ||
		!near(got.P95, want.P95) || !near(got.P99, want.P99) || !near(got.Mean, want.Mean) {
		t.Errorf("Summarize(%v) = %+v, want %+v", x, got, want)
	}
	if !slices.Equal(x, []float64{4, 1, 3, 2}) {
		t.Errorf("Summarize modified its input: %v", x)
	}

	// 1..100 shuffled: p50 = 1 + 0.5·99 = 50.5, p95 = 1 + 0.95·99 = 95.05,
	// p99 = 1 + 0.99·99 = 99.01 (numpy agrees).
	y := make([]float64, 100)
	for i := range y {
		y[i] = float64(i + 1)
	}
	rand.New(rand.NewPCG(1, 1)).Shuffle(len(y), func(i, j int) { y[i], y[j] = y[j], y[i] })
	s := Summarize(y)
	if s.N != 100 || s.Min != 1 || s.Max != 100 || !near(s.P50, 50.5) || !near(s.P95, 95.05) ||
		!near(s.P99, 99.01) || !near(s.Mean, 50.5) {
		t.Errorf("Summarize(1..100) = %+v", s)
	}
	if w := s.Warnings(); w != nil {
		t.Errorf("n=100 warnings = %q, want none", w)
	}

	e := Summarize(nil)
	if e.N != 0 || !math.IsNaN(e.Min) || !math.IsNaN(e.P50) || !math.IsNaN(e.P99) || !math.IsNaN(e.Mean) {
		t.Errorf("Summarize(nil) = %+v, want N=0 and NaNs", e)
	}
}

func TestMinN(t *testing.T) {
	for _, c := range []struct {
		q    float64
		want int
	}{
		{0, 1}, {-1, 1}, {0.5, 2}, {0.75, 4}, {0.9, 10}, {0.95, 20}, {0.99, 100},
		{0.999, 1000}, {0.9999, 10000}, {0.96, 25}, {0.97, 34},
		{1, math.MaxInt}, {math.NaN(), math.MaxInt},
	} {
		if got := MinN(c.q); got != c.want {
			t.Errorf("MinN(%v) = %d, want %d", c.q, got, c.want)
		}
	}
}

func TestTailWarnings(t *testing.T) {
	for _, c := range []struct {
		n    int
		want []string
	}{
		{0, []string{"n=0 is too small for p95 (needs >= 20)", "n=0 is too small for p99 (needs >= 100)"}},
		{12, []string{"n=12 is too small for p95 (needs >= 20)", "n=12 is too small for p99 (needs >= 100)"}},
		{20, []string{"n=20 is too small for p99 (needs >= 100)"}},
		{99, []string{"n=99 is too small for p99 (needs >= 100)"}},
		{100, nil},
		{1e6, nil},
	} {
		if got := TailWarnings(c.n); !slices.Equal(got, c.want) {
			t.Errorf("TailWarnings(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
