// Tests of the bootstrap: the documented procedure, determinism, coverage.

package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// naiveIndexer follows steps 2 and 3 of the procedure documented on
// BootstrapQuantileCI literally: it returns a function drawing indexes in
// [0, n) and a pointer to the number of rejected words.
func naiveIndexer(n, seed, stream uint64) (func() uint64, *int) {
	g := rand.NewPCG(seed, stream)
	var pending []uint32
	rejected := 0
	word := func() uint64 {
		if len(pending) == 0 {
			v := g.Uint64()
			pending = []uint32{uint32(v), uint32(v >> 32)}
		}
		w := pending[0]
		pending = pending[1:]
		return uint64(w)
	}
	return func() uint64 {
		for {
			m := word() * n
			if m%(1<<32) >= (1<<32)%n {
				return m >> 32
			}
			rejected++
		}
	}, &rejected
}

// naiveEstimates follows the whole procedure with a resample array that is
// sorted: the reference the counting resampler must match bit for bit.
func naiveEstimates(xs []float64, q float64, resamples int, seed, stream uint64) []float64 {
	x := slices.Clone(xs)
	slices.Sort(x)
	index, _ := naiveIndexer(uint64(len(x)), seed, stream)
	est := make([]float64, resamples)
	res := make([]float64, len(x))
	for r := range est {
		for i := range res {
			res[i] = x[index()]
		}
		slices.Sort(res)
		est[r] = Quantile(res, q)
	}
	return est
}

// TestIndexer checks the index draws against naiveIndexer, including
// Lemire's rejection: with n = 2^22+1 a word is rejected with probability
// about 1/1024, which samples of ordinary size would almost never show.
// tally only returns counts, so draws are compared as counts and then one
// at a time, which also checks that the word stream stays aligned.
func TestIndexer(t *testing.T) {
	for _, n := range []uint32{1, 2, 7, 1000, 1<<22 + 1} {
		want, rejected := naiveIndexer(uint64(n), 11, streamB)
		d := newIndexer(n, 11, streamB)
		hist := make([]uint32, n)
		const many = 20_001 // odd, so that a word is left pending
		d.tally(many, hist)
		wantHist := map[uint64]uint32{}
		for range many {
			wantHist[want()]++
		}
		for i, c := range wantHist {
			if hist[i] != c {
				t.Fatalf("n=%d: index %d drawn %d times, want %d", n, i, hist[i], c)
			}
		}
		for i := range 50 {
			clear(hist)
			d.tally(1, hist)
			if w := want(); hist[w] != 1 {
				t.Fatalf("n=%d: draw %d after the first %d is not %d", n, i, many, w)
			}
		}
		if n == 1<<22+1 && *rejected < 5 {
			t.Errorf("n=2^22+1: only %d of about 20 words rejected", *rejected)
		}
	}
}

// sample draws n exponential latencies (mean 1000 ns) rounded to whole
// nanoseconds, so that larger samples have ties.
func sample(n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 99))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = math.Round(1000 * r.ExpFloat64())
	}
	return xs
}

func sameBits(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

func TestResamplerMatchesProcedure(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 5, 20, 1000, 5000} {
		xs := sample(n, uint64(n))
		x := slices.Clone(xs)
		slices.Sort(x)
		for _, q := range []float64{0, 0.01, 0.3, 0.5, 0.6, 0.95, 0.99, 1} {
			const resamples = 60
			want := naiveEstimates(xs, q, resamples, 7, streamA)
			r := newResampler(x, q, 7, streamA)
			for i, w := range want {
				if got := r.next(); !sameBits(got, w) {
					t.Fatalf("n=%d q=%v resample %d: got %v, want %v", n, q, i, got, w)
				}
			}
		}
	}
}

func TestBootstrapQuantileCIProcedure(t *testing.T) {
	xs := sample(300, 3)
	est := naiveEstimates(xs, 0.95, 500, 42, streamA)
	slices.Sort(est)
	want := Interval{Quantile(est, 0.05), Quantile(est, 0.95)}
	got := BootstrapQuantileCI(xs, 0.95, 0.9, 500, 42)
	if !sameBits(got.Lo, want.Lo) || !sameBits(got.Hi, want.Hi) {
		t.Errorf("BootstrapQuantileCI = %v, procedure gives %v", got, want)
	}
}

func TestBootstrapDeterministic(t *testing.T) {
	xs := sample(200, 5)
	orig := slices.Clone(xs)
	a := BootstrapQuantileCI(xs, 0.5, 0.95, 2000, 1)
	b := BootstrapQuantileCI(xs, 0.5, 0.95, 2000, 1)
	c := BootstrapQuantileCI(xs, 0.5, 0.95, 2000, 2)
	if !sameBits(a.Lo, b.Lo) || !sameBits(a.Hi, b.Hi) {
		t.Errorf("same seed, different intervals: %v and %v", a, b)
	}
	if a == c {
		t.Errorf("seeds 1 and 2 gave the same interval %v", a)
	}
	if !slices.Equal(xs, orig) {
		t.Error("BootstrapQuantileCI modified its input")
	}

	ys := sample(150, 6)
	d1 := BootstrapQuantileDiffCI(xs, ys, 0.5, 0.95, 2000, 1)
	d2 := BootstrapQuantileDiffCI(xs, ys, 0.5, 0.95, 2000, 1)
	d3 := BootstrapQuantileDiffCI(xs, ys, 0.5, 0.95, 2000, 2)
	if !sameBits(d1.Lo, d2.Lo) || !sameBits(d1.Hi, d2.Hi) {
		t.Errorf("same seed, different diff intervals: %v and %v", d1, d2)
	}
	if d1 == d3 {
		t.Errorf("seeds 1 and 2 gave the same diff interval %v", d1)
	}
}

// TestBootstrapPinned pins results so that a change of algorithm, of
// math/rand/v2's PCG or of floating-point behaviour on some platform is
// noticed: perfstat prints seeds so that intervals can be recomputed later.
// The values were produced by this implementation (Go 1.26, amd64) and
// agree with naiveEstimates above.
func TestBootstrapPinned(t *testing.T) {
	xs := make([]float64, 50)
	for i := range xs {
		xs[i] = float64((i*37)%50) * 1.5
	}
	got := BootstrapQuantileCI(xs, 0.9, 0.95, 1000, 12345)
	want := Interval{58.800000000000004, 70.65}
	if !sameBits(got.Lo, want.Lo) || !sameBits(got.Hi, want.Hi) {
		t.Errorf("BootstrapQuantileCI = %#v, pinned %#v", got, want)
	}
	est := naiveEstimates(xs, 0.9, 1000, 12345, streamA)
	slices.Sort(est)
	if lo, hi := Quantile(est, 0.025), Quantile(est, 0.975); !sameBits(lo, want.Lo) || !sameBits(hi, want.Hi) {
		t.Errorf("the documented procedure gives [%v, %v], pinned %#v", lo, hi, want)
	}
}

// TestBootstrapCoverage checks that a nominal 95% interval for the median
// covers the true median in roughly 95% of samples: 200 samples of 50 from
// the exponential distribution with mean 1, whose median is ln 2.
func TestBootstrapCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(2024, 1))
	trueMedian := math.Ln2
	xs := make([]float64, 50)
	covered := 0
	const trials = 200
	for i := range trials {
		for j := range xs {
			xs[j] = r.ExpFloat64()
		}
		if BootstrapQuantileCI(xs, 0.5, 0.95, 1000, uint64(i)).Contains(trueMedian) {
			covered++
		}
	}
	rate := float64(covered) / trials
	t.Logf("coverage %d/%d = %.3f", covered, trials, rate)
	if rate < 0.88 || rate > 0.99 {
		t.Errorf("95%% CI covered the true median in %.3f of trials, want 0.88..0.99", rate)
	}
}

func TestBootstrapQuantileDiffCI(t *testing.T) {
	r := rand.New(rand.NewPCG(77, 1))
	draw := func(n int, shift float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = 1000 + 1000*r.ExpFloat64() + shift
		}
		return xs
	}

	// Same distribution: the interval contains 0 in roughly 95% of pairs.
	const pairs = 100
	zero := 0
	for i := range pairs {
		if BootstrapQuantileDiffCI(draw(40, 0), draw(40, 0), 0.5, 0.95, 1000, uint64(i)).Contains(0) {
			zero++
		}
	}
	t.Logf("diff CI contained 0 in %d/%d same-distribution pairs", zero, pairs)
	if zero < 85 {
		t.Errorf("diff CI contained 0 in only %d/%d same-distribution pairs", zero, pairs)
	}

	// b is a shifted by 500 ns: the interval is above 0 and contains 500.
	a, b := draw(100, 0), draw(100, 500)
	iv := BootstrapQuantileDiffCI(a, b, 0.5, 0.95, 2000, 1)
	if iv.Lo <= 0 || !iv.Contains(500) {
		t.Errorf("diff CI for a +500 ns shift = %v, want above 0 and containing 500", iv)
	}
	if rev := BootstrapQuantileDiffCI(b, a, 0.5, 0.95, 2000, 1); rev.Hi >= 0 {
		t.Errorf("diff CI for a -500 ns shift = %v, want below 0", rev)
	}

	// With a constant b every difference is c - e_a, so the interval mirrors
	// BootstrapQuantileCI(a): this checks that a uses the documented stream.
	single := BootstrapQuantileCI(a, 0.5, 0.95, 2000, 9)
	mirror := BootstrapQuantileDiffCI(a, []float64{3000, 3000}, 0.5, 0.95, 2000, 9)
	if math.Abs(mirror.Lo-(3000-single.Hi)) > 1e-9 || math.Abs(mirror.Hi-(3000-single.Lo)) > 1e-9 {
		t.Errorf("diff against a constant = %v, want 3000 minus %v", mirror, single)
	}
}

func TestBootstrapEdges(t *testing.T) {
	xs := []float64{1, 2, 3}
	for _, iv := range []Interval{
		BootstrapQuantileCI(nil, 0.5, 0.95, 100, 1),
		BootstrapQuantileCI(xs, -0.1, 0.95, 100, 1),
		BootstrapQuantileCI(xs, 0.5, 1, 100, 1),
		BootstrapQuantileCI(xs, 0.5, 0, 100, 1),
		BootstrapQuantileCI(xs, 0.5, 0.95, 0, 1),
		BootstrapQuantileDiffCI(xs, nil, 0.5, 0.95, 100, 1),
		BootstrapQuantileDiffCI(nil, xs, 0.5, 0.95, 100, 1),
	} {
		if !math.IsNaN(iv.Lo) || !math.IsNaN(iv.Hi) || iv.Contains(2) {
			t.Errorf("invalid input gave %v, want NaN-NaN containing nothing", iv)
		}
	}
	if iv := BootstrapQuantileCI([]float64{42}, 0.99, 0.95, 100, 1); iv != (Interval{42, 42}) {
		t.Errorf("single value: %v, want [42, 42]", iv)
	}
	if iv := BootstrapQuantileCI([]float64{5, 5, 5, 5}, 0.5, 0.95, 100, 1); iv != (Interval{5, 5}) {
		t.Errorf("constant sample: %v, want [5, 5]", iv)
	}
	iv := BootstrapQuantileCI(xs, 0.5, 0.95, 1, 1)
	if iv.Lo != iv.Hi || iv.Lo < 1 || iv.Lo > 3 {
		t.Errorf("one resample: %v, want one value in [1, 3]", iv)
	}
}
