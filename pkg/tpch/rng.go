// Random number streams: dbgen's Park-Miller generator, its uniform draws and skip-ahead.

package tpch

const (
	rngMod  = 2147483647 // 2^31 - 1, the Park-Miller modulus
	rngMult = 16807      // the Park-Miller multiplier
	maxLong = 0x7FFFFFFF // dbgen's MAX_LONG with its default BITS_PER_LONG of 32

	// rng64A and rng64C drive the 64-bit LCG that dbgen switches to for
	// o_custkey and l_partkey at scale factors of 30000 and above.
	rng64A = 6364136223846793005
	rng64C = 1
)

// mulMod returns a*b mod 2^31-1 for a, b in [0, 2^31-1); it folds the high
// bits back instead of dividing, which is what makes the streams cheap.
func mulMod(a, b int64) int64 {
	x := uint64(a) * uint64(b)
	r := (x & rngMod) + (x >> 31)
	r = (r & rngMod) + (r >> 31)
	if r >= rngMod {
		r -= rngMod
	}
	return int64(r)
}

// powMod returns 16807^n mod 2^31-1, the multiplier that moves a stream n
// draws ahead (dbgen's NthElement computes the same thing step by step).
func powMod(n int64) int64 {
	result := int64(1)
	m := int64(rngMult)
	for n > 0 {
		if n&1 != 0 {
			result = mulMod(result, m)
		}
		n >>= 1
		m = mulMod(m, m)
	}
	return result
}

// stream is one of dbgen's 48 independent column streams. Every row of a
// table consumes a fixed number of draws ("boundary") from each of its
// streams, padding unused ones, so the state at the start of row r is
// seed * 16807^(boundary*(r-1)). That is what lets any row range be
// generated independently and in parallel without changing a byte.
type stream struct {
	seed     int64 // current state
	rowStart int64 // state at the start of the current row
	rowMul   int64 // 16807^boundary: moves rowStart to the next row
	init     int64 // state before row 1
	boundary int64 // draws per row
}

func newStream(id int) stream {
	s := seeds[id]
	return stream{seed: s.value, rowStart: s.value, init: s.value, rowMul: powMod(s.boundary), boundary: s.boundary}
}

// seekRow positions the stream at the start of 1-based row (or order, part, ...) r.
func (s *stream) seekRow(r int64) {
	s.rowStart = mulMod(s.init, powMod(s.boundary*(r-1)))
	s.seed = s.rowStart
}

// nextRow skips whatever draws the current row left unused.
func (s *stream) nextRow() {
	s.rowStart = mulMod(s.rowStart, s.rowMul)
	s.seed = s.rowStart
}

// next advances the stream by one draw.
func (s *stream) next() int64 {
	x := uint64(s.seed) * rngMult
	r := (x & rngMod) + (x >> 31)
	if r >= rngMod {
		r -= rngMod
	}
	s.seed = int64(r)
	return s.seed
}

// unif returns a value uniformly drawn from [lo, hi] exactly as dbgen's
// UnifInt does: through double arithmetic, truncated toward zero.
func (s *stream) unif(lo, hi int64) int64 {
	v := s.next()
	return lo + int64(float64(v)/float64(rngMod)*float64(hi-lo+1))
}

// unifMaxLong is UnifInt(0, MAX_LONG): dbgen computes that range in 32-bit
// ints, where MAX_LONG+1 wraps to -2^31, so the result is never positive.
// a_rnd relies on that quirk and so must we.
func (s *stream) unifMaxLong() int64 {
	v := s.next()
	return int64(float64(v) / float64(rngMod) * -2147483648.0)
}

// pick chooses an entry of d by weight (dbgen's pick_str) and returns its index.
func (s *stream) pick(d *dist) int {
	return int(d.pick[s.unif(1, d.total())])
}

// unif64 is dbgen's dss_random64: the 64-bit LCG reduced with a modulus.
func (s *stream) unif64(lo, hi int64) int64 {
	if lo > hi {
		lo, hi = hi, lo
	}
	s.seed = int64(uint64(s.seed)*rng64A + rng64C)
	t := s.seed
	if t < 0 {
		t = -t
	}
	t %= hi - lo + 1
	return lo + t
}

// padNth reproduces dbgen's NthElement applied to a stream that holds a
// 64-bit LCG state (which dbgen does for l_partkey at scale >= 30000): the
// multiplications wrap in signed 64-bit arithmetic before the modulus.
func padNth(z int64, n int64) int64 {
	mult := int64(rngMult)
	for n > 0 {
		if n%2 != 0 {
			z = (mult * z) % rngMod
		}
		n /= 2
		mult = (mult * mult) % rngMod
	}
	return z
}

// advance64 moves a 64-bit LCG state n steps ahead by composing the affine
// step x -> a*x + c with itself (square-and-multiply on affine maps).
func advance64(x int64, n int64) int64 {
	a, c := uint64(rng64A), uint64(rng64C)
	ra, rc := uint64(1), uint64(0)
	for n > 0 {
		if n&1 != 0 {
			ra, rc = a*ra, a*rc+c
		}
		a, c = a*a, a*c+c
		n >>= 1
	}
	return int64(ra*uint64(x) + rc)
}
