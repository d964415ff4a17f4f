// A fixed log-bucket latency histogram: 8 linear sub-buckets per power of two.

package digest

import (
	"math"
	"math/bits"
	"time"
)

// Histogram layout. Bucket 0 holds durations below 1.024 µs (2^10 ns);
// then every power of two from 2^10 to 2^40 ns (about 18 minutes) is split
// into 8 equal sub-buckets; the last bucket holds everything above.
const (
	histMinExp = 10
	histMaxExp = 40
	histSub    = 8
	histBits   = 3 // log2(histSub)
	histLen    = (histMaxExp-histMinExp)*histSub + 2
)

// hist counts durations. It is not safe for concurrent use; the Store
// guards it.
type hist [histLen]uint32

func histIndex(ns int64) int {
	if ns < 1<<histMinExp {
		return 0
	}
	u := uint64(ns)
	e := bits.Len64(u) - 1 // 2^e <= ns < 2^(e+1)
	if e >= histMaxExp {
		return histLen - 1
	}
	sub := int(u>>(e-histBits)) & (histSub - 1)
	return 1 + (e-histMinExp)*histSub + sub
}

// histBounds returns the bucket's range [lo, hi) in nanoseconds.
func histBounds(i int) (lo, hi int64) {
	switch {
	case i == 0:
		return 0, 1 << histMinExp
	case i == histLen-1:
		return 1 << histMaxExp, 1 << 62
	}
	e := (i-1)/histSub + histMinExp
	sub := int64((i - 1) % histSub)
	w := int64(1) << (e - histBits)
	lo = int64(1)<<e + sub*w
	return lo, lo + w
}

func (h *hist) add(d time.Duration) {
	if d < 0 {
		d = 0
	}
	if i := histIndex(int64(d)); h[i] < ^uint32(0) {
		h[i]++
	}
}

// quantile returns the q-quantile by nearest rank: the midpoint of the
// bucket holding the ceil(q*count)-th smallest duration, clamped to
// [min, max]. Within the 2^10..2^40 ns range it is within 1/16 (6.25 %) of
// that duration. count (the calls) only tells whether there are any.
func (h *hist) quantile(q float64, count uint64, min, max time.Duration) time.Duration {
	if count == 0 {
		return 0
	}
	// The rank comes from the buckets' own total: a bucket that saturated
	// (2^32-1 calls of one shape) would otherwise push every rank past it.
	count = 0
	for i := range h {
		count += uint64(h[i])
	}
	rank := uint64(math.Ceil(q * float64(count)))
	if rank < 1 {
		rank = 1
	}
	if rank > count {
		rank = count
	}
	var seen uint64
	for i := range h {
		seen += uint64(h[i])
		if seen >= rank {
			lo, hi := histBounds(i)
			v := time.Duration(lo + (hi-lo)/2)
			return clamp(v, min, max)
		}
	}
	return max
}

func clamp(v, lo, hi time.Duration) time.Duration {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}
