// Quantiles, means and one-sample summaries.

package stats

import (
	"fmt"
	"math"
	"slices"
)

// Quantile returns the q-quantile of sorted, which must be in ascending
// order (Quantile does not check, so the bootstrap can call it cheaply).
//
// It interpolates linearly between order statistics, Hyndman and Fan's
// type 7: with h = (n-1)·q and k = ⌊h⌋ the result is
// x[k] + (h-k)·(x[k+1]-x[k]). This is the default of numpy.quantile, R's
// quantile and most spreadsheets, so every number perfstat prints can be
// checked against them.
//
// Quantile returns NaN, rather than panicking, for an empty slice and for q
// that is NaN or outside [0, 1]: a report then shows the hole next to its
// other numbers instead of losing them all.
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 || !(q >= 0 && q <= 1) {
		return math.NaN()
	}
	k, frac := position(len(sorted), q)
	if frac == 0 {
		return sorted[k]
	}
	return lerp(sorted[k], sorted[k+1], frac)
}

// position returns k = ⌊(n-1)·q⌋ and the fraction h-k for n >= 1 and q in
// [0, 1]. frac is 0 whenever k is the last index, so callers read x[k+1]
// only when frac > 0.
func position(n int, q float64) (k int, frac float64) {
	h := float64(n-1) * q
	k = int(h) // h >= 0, so truncation is floor
	if k >= n-1 {
		return n - 1, 0
	}
	return k, h - float64(k)
}

// lerp is a + frac·(b-a). The explicit float64 conversion forbids the
// compiler from fusing the multiply and add into an FMA, which Go does on
// arm64, ppc64 and s390x but not amd64; without it the last bit of a
// quantile, and so of a bootstrap interval, could differ between platforms.
// Equal neighbours (two infinities among them) give themselves, and
// infinite ones, or a difference too large for a float64, the weighted
// sum R computes, where b-a would be NaN or leave [a, b]; other finite
// inputs keep the formula above, bit for bit (but a -0 neighbour taken
// as it is stays -0, where the formula gave +0).
func lerp(a, b, frac float64) float64 {
	if a == b || frac == 0 {
		return a
	}
	d := b - a
	if math.IsInf(d, 0) || math.IsNaN(d) {
		return float64((1-frac)*a) + float64(frac*b)
	}
	return a + float64(frac*d)
}

// Mean returns the arithmetic mean of xs, or NaN for an empty slice.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// Median returns the type-7 0.5-quantile of xs (the mean of the two middle
// values for even n), or NaN for an empty slice. It sorts a copy and leaves
// xs unchanged.
func Median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return Quantile(s, 0.5)
}

// Summary is the one-line description perfstat prints for a sample. The
// quantiles are type 7 (see Quantile). For an empty sample N is 0 and every
// other field is NaN.
type Summary struct {
	N                             int
	Min, P50, P95, P99, Max, Mean float64
}

// Summarize describes xs. It sorts a copy, so xs is not modified and may be
// shared with other readers.
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		nan := math.NaN()
		return Summary{Min: nan, P50: nan, P95: nan, P99: nan, Max: nan, Mean: nan}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Summary{
		N:    len(s),
		Min:  s[0],
		P50:  Quantile(s, 0.50),
		P95:  Quantile(s, 0.95),
		P99:  Quantile(s, 0.99),
		Max:  s[len(s)-1],
		Mean: Mean(xs),
	}
}

// Warnings returns TailWarnings(s.N): the messages perfstat must print next
// to s so that an unreliable p95 or p99 is never shown bare.
func (s Summary) Warnings() []string {
	return TailWarnings(s.N)
}

// MinN returns the smallest sample size for which a q-quantile estimate says
// more than "the largest value seen": the smallest n with n·(1-q) >= 1,
// that is ⌈1/(1-q)⌉. Below it fewer than one observation is expected above
// the true q-quantile, so the estimate is made of the top one or two order
// statistics and mostly measures the single worst outlier. For p95 it is 20,
// for p99 100, for p99.9 1000.
//
// 1/(1-q) is rounded with a relative tolerance of 1e-9 before the ceiling,
// because 1-0.9 is not exactly 0.1 in binary and 10.000000000000002 must not
// become 11. MinN returns 1 for q <= 0, and math.MaxInt for q >= 1 or NaN:
// no finite sample estimates the true maximum.
func MinN(q float64) int {
	switch {
	case q <= 0:
		return 1
	case !(q < 1):
		return math.MaxInt
	}
	m := 1 / (1 - q)
	if m >= 1<<62 {
		return math.MaxInt
	}
	return int(math.Ceil(m * (1 - 1e-9)))
}

// tails are the percentiles perfstat reports beyond the median.
var tails = []struct {
	name string
	q    float64
}{{"p95", 0.95}, {"p99", 0.99}}

// TailWarnings returns one message for each reported tail percentile (p95,
// p99) that a sample of n values is too small for by MinN, e.g.
// "n=12 is too small for p95 (needs >= 20)". It returns nil when n is large
// enough for both.
func TailWarnings(n int) []string {
	var out []string
	for _, t := range tails {
		if need := MinN(t.q); n < need {
			out = append(out, fmt.Sprintf("n=%d is too small for %s (needs >= %d)", n, t.name, need))
		}
	}
	return out
}
