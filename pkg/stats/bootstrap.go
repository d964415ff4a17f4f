// Percentile-bootstrap confidence intervals for quantiles, reproducible from a seed.

package stats

import (
	"math"
	"math/rand/v2"
	"slices"
)

// The two PCG streams of the bootstrap; see BootstrapQuantileCI. They are
// the first two SHA-512 initial hash words, chosen only to be documented
// and unrelated to each other.
const (
	streamA uint64 = 0x6a09e667f3bcc908
	streamB uint64 = 0xbb67ae8584caa73b
)

// Interval is a closed confidence interval [Lo, Hi]. Both ends are NaN when
// the inputs could not produce one.
type Interval struct {
	Lo, Hi float64
}

// Contains reports whether x lies in [iv.Lo, iv.Hi]; false if either end is
// NaN.
func (iv Interval) Contains(x float64) bool {
	return iv.Lo <= x && x <= iv.Hi
}

// BootstrapQuantileCI returns a percentile-bootstrap confidence interval,
// at confidence level conf (e.g. 0.95), for the type-7 q-quantile of the
// population xs was drawn from. xs is not modified.
//
// The result depends only on the arguments and is the same on every
// platform and run. The exact procedure, which a reimplementation must
// follow to reproduce it, is:
//
//  1. Sort a copy of xs ascending: x[0] <= ... <= x[n-1].
//  2. Make a generator g = rand.NewPCG(seed, 0x6a09e667f3bcc908) (PCG-DXSM,
//     as specified by math/rand/v2). Its 32-bit words are, in order, the low
//     then the high half of g.Uint64(), then the low and high half of the
//     next Uint64, and so on; the word stream continues across resamples.
//  3. For r = 0 .. resamples-1 draw n indexes. An index takes the next word
//     w and computes m = w·n as a 64-bit product; if m mod 2^32 is less than
//     2^32 mod n the word is rejected and the next one taken (Lemire's
//     unbiased method), otherwise the index is ⌊m / 2^32⌋. The resample is
//     the n values x[index]; its estimate e[r] is Quantile of the sorted
//     resample.
//  4. Sort e ascending. The interval is [Quantile(e, (1-conf)/2),
//     Quantile(e, (1+conf)/2)].
//
// Step 3 never sorts: it counts how many drawn indexes fall at each position
// of the already sorted x and walks the counts, from the nearer end, to the
// order statistics the quantile needs, which gives the same values as
// sorting. The cost is O(n) per resample and 4n bytes of counts.
//
// The interval is NaN-NaN when xs is empty, q is outside [0, 1], conf is
// outside (0, 1) or resamples < 1. It panics if len(xs) >= 2^32.
//
// The percentile bootstrap of a quantile is only as good as the sample's
// tail: check MinN(q) before trusting an interval on p95 or p99.
func BootstrapQuantileCI(xs []float64, q, conf float64, resamples int, seed uint64) Interval {
	if !bootstrapArgsOK(q, conf, resamples) || len(xs) == 0 {
		return Interval{math.NaN(), math.NaN()}
	}
	r := newResampler(sortedCopy(xs), q, seed, streamA)
	est := make([]float64, resamples)
	for i := range est {
		est[i] = r.next()
	}
	return percentileInterval(est, conf)
}

// BootstrapQuantileDiffCI returns a percentile-bootstrap confidence
// interval for Quantile(b, q) - Quantile(a, q) of the populations a and b
// were drawn from: positive when b's quantile is larger (b slower, for
// latencies). Neither slice is modified.
//
// a and b are resampled independently, each as in step 3 of
// BootstrapQuantileCI: a from rand.NewPCG(seed, 0x6a09e667f3bcc908) (so its
// estimates are exactly those BootstrapQuantileCI(a, ...) uses) and b from
// rand.NewPCG(seed, 0xbb67ae8584caa73b). The r-th difference is
// e_b[r] - e_a[r]; the differences are sorted and cut as in step 4.
//
// The interval is NaN-NaN when a or b is empty or the other arguments are
// invalid as for BootstrapQuantileCI.
func BootstrapQuantileDiffCI(a, b []float64, q, conf float64, resamples int, seed uint64) Interval {
	if !bootstrapArgsOK(q, conf, resamples) || len(a) == 0 || len(b) == 0 {
		return Interval{math.NaN(), math.NaN()}
	}
	ra := newResampler(sortedCopy(a), q, seed, streamA)
	rb := newResampler(sortedCopy(b), q, seed, streamB)
	est := make([]float64, resamples)
	for i := range est {
		ea := ra.next()
		est[i] = rb.next() - ea
	}
	return percentileInterval(est, conf)
}

func bootstrapArgsOK(q, conf float64, resamples int) bool {
	return q >= 0 && q <= 1 && conf > 0 && conf < 1 && resamples >= 1
}

func sortedCopy(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// percentileInterval sorts est in place and cuts it at (1∓conf)/2.
func percentileInterval(est []float64, conf float64) Interval {
	slices.Sort(est)
	return Interval{Quantile(est, (1-conf)/2), Quantile(est, (1+conf)/2)}
}

// indexer draws uniform indexes in [0, n) as in steps 2 and 3 of
// BootstrapQuantileCI.
type indexer struct {
	g      rand.PCG
	buf    uint64 // the last Uint64; its high word is pending when half is set
	half   bool
	n      uint32
	reject uint32 // 2^32 mod n: a word whose product's low half is below it is rejected
}

func newIndexer(n uint32, seed, stream uint64) indexer {
	return indexer{g: *rand.NewPCG(seed, stream), n: n, reject: -n % n}
}

// tally draws count indexes and increments hist[i] for each index i. It is
// the bootstrap's inner loop: the generator lives in local variables, and
// each Uint64 is split into its two words without testing a pending-word
// flag per draw.
func (d *indexer) tally(count int, hist []uint32) {
	g := d.g
	n, reject := uint64(d.n), d.reject
	left := count
	add := func(w uint32) {
		m := uint64(w) * n
		if uint32(m) < reject {
			return // rejected: the next word replaces it
		}
		hist[m>>32]++
		left--
	}
	if d.half && left > 0 {
		d.half = false
		add(uint32(d.buf >> 32))
	}
	for left > 0 {
		v := g.Uint64()
		add(uint32(v))
		if left == 0 {
			d.buf, d.half = v, true
			break
		}
		add(uint32(v >> 32))
	}
	d.g = g
}

// resampler draws bootstrap resamples of one sorted sample and returns each
// one's type-7 quantile estimate, as in step 3 of BootstrapQuantileCI.
type resampler struct {
	x      []float64
	k      int // the estimate needs order statistics k and, if frac > 0, k+1
	frac   float64
	draw   indexer
	counts []uint32 // counts[i]: how many times x[i] is in the current resample
}

// newResampler prepares resampling of the sorted sample x for the
// q-quantile from the PCG stream (seed, stream).
func newResampler(x []float64, q float64, seed, stream uint64) *resampler {
	n := len(x)
	if uint64(n) >= 1<<32 {
		panic("stats: bootstrap sample has 2^32 or more values")
	}
	k, frac := position(n, q)
	return &resampler{x: x, k: k, frac: frac, draw: newIndexer(uint32(n), seed, stream), counts: make([]uint32, n)}
}

// next draws one resample and returns its quantile estimate.
func (r *resampler) next() float64 {
	r.draw.tally(len(r.x), r.counts)
	i, j := orderStats(r.counts, r.k, r.frac > 0)
	clear(r.counts)
	if r.frac == 0 {
		return r.x[i]
	}
	return lerp(r.x[i], r.x[j], r.frac)
}

// orderStats returns the positions i and j of the order statistics k and
// k+1 (j only if second) of a resample of len(counts) draws whose counts per
// position of the sorted sample are counts; k+1 < len(counts) if second. It
// walks from whichever end is nearer to k, so it reads at most about half
// of counts.
func orderStats(counts []uint32, k int, second bool) (i, j int) {
	n := len(counts) // every resample has as many draws as positions
	if k < n/2 {
		// Order statistic r is at the first position where the number of
		// draws at or below it exceeds r.
		cum := 0
		for cum <= k {
			cum += int(counts[i])
			i++
		}
		i--
		j = i
		for second && cum <= k+1 {
			j++
			cum += int(counts[j])
		}
		return i, j
	}
	// Order statistic r is at the first position, walking down, where the
	// number of draws at or above it exceeds n-1-r. Find k+1 first.
	t := n - 1 - k
	if second {
		t--
	}
	cum, p := 0, n
	for cum <= t {
		p--
		cum += int(counts[p])
	}
	if !second {
		return p, p
	}
	i, j = p, p
	for cum <= t+1 {
		i--
		cum += int(counts[i])
	}
	return i, j
}
